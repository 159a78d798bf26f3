import { MigrationInterface, QueryRunner } from "typeorm";

export class Upstreams1795990000000 implements MigrationInterface {
    name = 'Upstreams1795990000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            CREATE TABLE "upstreams" (
                "id" text NOT NULL,
                "account_id" text NOT NULL,
                "name" text NOT NULL,
                "transport" text NOT NULL,
                "url" text NOT NULL,
                "auth" jsonb NOT NULL,
                "tool_filter" jsonb NOT NULL,
                "timeout_seconds" integer NOT NULL,
                "enabled" boolean NOT NULL,
                "disabled_tools" jsonb NOT NULL,
                "tools" jsonb NOT NULL,
                "last_contact_at" TIMESTAMP WITH TIME ZONE,
                "last_error" text,
                "latency_ms" integer,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "pk_upstreams" PRIMARY KEY ("id"),
                CONSTRAINT "fk_upstreams_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE
            )
        `);
        await queryRunner.query(`CREATE UNIQUE INDEX "idx_upstreams_account_name" ON "upstreams" ("account_id", "name")`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`DROP TABLE "upstreams"`);
    }
}
