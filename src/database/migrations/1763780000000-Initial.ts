import { MigrationInterface, QueryRunner } from "typeorm";

export class Initial1763780000000 implements MigrationInterface {
    name = 'Initial1763780000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            CREATE TABLE "accounts" (
                "id" text NOT NULL,
                "name" text NOT NULL,
                "tier" text NOT NULL,
                "requests_per_minute" integer,
                "monthly_calls" integer,
                "retention_days" integer,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "pk_accounts" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`
            CREATE UNIQUE INDEX "uq_accounts_name" ON "accounts" ("name")
        `);
        await queryRunner.query(`
            CREATE TABLE "api_keys" (
                "id" text NOT NULL,
                "account_id" text NOT NULL,
                "name" text NOT NULL,
                "type" text NOT NULL,
                "prefix" text NOT NULL,
                "last4" text NOT NULL,
                "secret_hash" text NOT NULL,
                "scopes" text array NOT NULL,
                "tool_ids" text array,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "expires_at" TIMESTAMP WITH TIME ZONE,
                "revoked_at" TIMESTAMP WITH TIME ZONE,
                "last_used_at" TIMESTAMP WITH TIME ZONE,
                "replaces_key_id" text,
                CONSTRAINT "pk_api_keys" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`
            CREATE UNIQUE INDEX "uq_api_keys_secret_hash" ON "api_keys" ("secret_hash")
        `);
        await queryRunner.query(`
            CREATE INDEX "idx_api_keys_account" ON "api_keys" ("account_id", "created_at")
        `);
        await queryRunner.query(`
            CREATE TABLE "executions" (
                "id" text NOT NULL,
                "account_id" text NOT NULL,
                "key_id" text NOT NULL,
                "tool_id" text NOT NULL,
                "tool_version" text NOT NULL,
                "status" text NOT NULL,
                "mode" text NOT NULL,
                "progress" smallint NOT NULL DEFAULT '0',
                "progress_message" text,
                "input" jsonb NOT NULL,
                "result" jsonb,
                "error" jsonb,
                "request_id" text,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "started_at" TIMESTAMP WITH TIME ZONE,
                "completed_at" TIMESTAMP WITH TIME ZONE,
                "duration_ms" integer,
                CONSTRAINT "pk_executions" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`
            CREATE INDEX "idx_executions_created_at" ON "executions" ("created_at")
        `);
        await queryRunner.query(`
            CREATE INDEX "idx_executions_account_tool" ON "executions" ("account_id", "tool_id", "id")
        `);
        await queryRunner.query(`
            CREATE INDEX "idx_executions_account_status" ON "executions" ("account_id", "status", "id")
        `);
        await queryRunner.query(`
            CREATE INDEX "idx_executions_account_id" ON "executions" ("account_id", "id")
        `);
        await queryRunner.query(`
            ALTER TABLE "api_keys"
            ADD CONSTRAINT "fk_api_keys_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
        await queryRunner.query(`
            ALTER TABLE "executions"
            ADD CONSTRAINT "fk_executions_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            ALTER TABLE "executions" DROP CONSTRAINT "fk_executions_account"
        `);
        await queryRunner.query(`
            ALTER TABLE "api_keys" DROP CONSTRAINT "fk_api_keys_account"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."idx_executions_account_id"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."idx_executions_account_status"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."idx_executions_account_tool"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."idx_executions_created_at"
        `);
        await queryRunner.query(`
            DROP TABLE "executions"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."idx_api_keys_account"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."uq_api_keys_secret_hash"
        `);
        await queryRunner.query(`
            DROP TABLE "api_keys"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."uq_accounts_name"
        `);
        await queryRunner.query(`
            DROP TABLE "accounts"
        `);
    }

}
