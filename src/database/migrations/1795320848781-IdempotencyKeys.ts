import { MigrationInterface, QueryRunner } from "typeorm";

export class IdempotencyKeys1795320848781 implements MigrationInterface {
    name = 'IdempotencyKeys1795320848781'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            CREATE TABLE "idempotency_keys" (
                "key_id" text NOT NULL,
                "tool_id" text NOT NULL,
                "idempotency_key" text NOT NULL,
                "request_hash" text NOT NULL,
                "response_status" integer,
                "response_body" jsonb,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "pk_idempotency_keys" PRIMARY KEY ("key_id", "tool_id", "idempotency_key")
            )
        `);
        await queryRunner.query(`
            CREATE INDEX "idx_idempotency_keys_expires_at" ON "idempotency_keys" ("expires_at")
        `);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            DROP INDEX "public"."idx_idempotency_keys_expires_at"
        `);
        await queryRunner.query(`
            DROP TABLE "idempotency_keys"
        `);
    }

}
