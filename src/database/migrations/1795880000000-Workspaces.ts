import { MigrationInterface, QueryRunner } from "typeorm";

export class Workspaces1795880000000 implements MigrationInterface {
    name = 'Workspaces1795880000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            CREATE TABLE "workspaces" (
                "id" text NOT NULL,
                "account_id" text NOT NULL,
                "format" text NOT NULL,
                "digest" text NOT NULL,
                "files" integer NOT NULL,
                "bytes" bigint NOT NULL,
                "archive_bytes" integer NOT NULL,
                "archive" bytea NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "pk_workspaces" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`CREATE INDEX "ix_workspaces_account_created" ON "workspaces" ("account_id", "created_at")`);
        await queryRunner.query(`CREATE INDEX "ix_workspaces_expires" ON "workspaces" ("expires_at")`);
        await queryRunner.query(`
            ALTER TABLE "workspaces"
            ADD CONSTRAINT "fk_workspaces_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "workspaces" DROP CONSTRAINT "fk_workspaces_account"`);
        await queryRunner.query(`DROP INDEX "ix_workspaces_expires"`);
        await queryRunner.query(`DROP INDEX "ix_workspaces_account_created"`);
        await queryRunner.query(`DROP TABLE "workspaces"`);
    }

}
