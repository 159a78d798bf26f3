import { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Per-account workspace quotas (enterprise overrides on the account), and archives stored in
 * chunks of their own rows: one upload is many short statements, so other accounts' queries
 * are not held behind one 50 MiB insert. A workspace is usable once `ready`; the archives already
 * stored move over as one chunk each.
 */
export class WorkspaceQuotas1795910000000 implements MigrationInterface {
    name = 'WorkspaceQuotas1795910000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "accounts" ADD "workspaces" integer`);
        await queryRunner.query(`ALTER TABLE "accounts" ADD "workspace_bytes" bigint`);
        await queryRunner.query(`
            CREATE TABLE "workspace_chunks" (
                "workspace_id" text NOT NULL,
                "seq" integer NOT NULL,
                "data" bytea NOT NULL,
                CONSTRAINT "pk_workspace_chunks" PRIMARY KEY ("workspace_id", "seq")
            )
        `);
        await queryRunner.query(`
            ALTER TABLE "workspace_chunks"
            ADD CONSTRAINT "fk_workspace_chunks_workspace" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
        await queryRunner.query(`INSERT INTO "workspace_chunks" ("workspace_id", "seq", "data") SELECT "id", 0, "archive" FROM "workspaces"`);
        await queryRunner.query(`ALTER TABLE "workspaces" DROP COLUMN "archive"`);
        await queryRunner.query(`ALTER TABLE "workspaces" ADD "ready" boolean NOT NULL DEFAULT true`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`DELETE FROM "workspaces" WHERE NOT "ready"`);
        await queryRunner.query(`ALTER TABLE "workspaces" DROP COLUMN "ready"`);
        await queryRunner.query(`ALTER TABLE "workspaces" ADD "archive" bytea`);
        await queryRunner.query(`
            UPDATE "workspaces" w SET "archive" = (SELECT string_agg(c."data", ''::bytea ORDER BY c."seq") FROM "workspace_chunks" c WHERE c."workspace_id" = w."id")
        `);
        await queryRunner.query(`ALTER TABLE "workspaces" ALTER COLUMN "archive" SET NOT NULL`);
        await queryRunner.query(`DROP TABLE "workspace_chunks"`);
        await queryRunner.query(`ALTER TABLE "accounts" DROP COLUMN "workspace_bytes"`);
        await queryRunner.query(`ALTER TABLE "accounts" DROP COLUMN "workspaces"`);
    }

}
