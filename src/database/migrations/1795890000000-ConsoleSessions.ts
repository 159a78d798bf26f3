import { MigrationInterface, QueryRunner } from "typeorm";

export class ConsoleSessions1795890000000 implements MigrationInterface {
    name = 'ConsoleSessions1795890000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            CREATE TABLE "console_links" (
                "id" text NOT NULL,
                "token_hash" text NOT NULL,
                "account_id" text NOT NULL,
                "scopes" text array NOT NULL,
                "tool_ids" text array,
                "created_by" text NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "used_at" TIMESTAMP WITH TIME ZONE,
                CONSTRAINT "pk_console_links" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`CREATE UNIQUE INDEX "uq_console_links_token_hash" ON "console_links" ("token_hash")`);
        await queryRunner.query(`CREATE INDEX "ix_console_links_expires" ON "console_links" ("expires_at")`);
        await queryRunner.query(`
            ALTER TABLE "console_links"
            ADD CONSTRAINT "fk_console_links_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
        await queryRunner.query(`
            CREATE TABLE "console_sessions" (
                "id" text NOT NULL,
                "secret_hash" text NOT NULL,
                "account_id" text NOT NULL,
                "scopes" text array NOT NULL,
                "tool_ids" text array,
                "link_id" text NOT NULL,
                "user_agent" text,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "last_seen_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "revoked_at" TIMESTAMP WITH TIME ZONE,
                CONSTRAINT "pk_console_sessions" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`CREATE UNIQUE INDEX "uq_console_sessions_secret_hash" ON "console_sessions" ("secret_hash")`);
        await queryRunner.query(`CREATE INDEX "ix_console_sessions_account" ON "console_sessions" ("account_id", "created_at")`);
        await queryRunner.query(`CREATE INDEX "ix_console_sessions_expires" ON "console_sessions" ("expires_at")`);
        await queryRunner.query(`
            ALTER TABLE "console_sessions"
            ADD CONSTRAINT "fk_console_sessions_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`DROP TABLE "console_sessions"`);
        await queryRunner.query(`DROP TABLE "console_links"`);
    }

}
