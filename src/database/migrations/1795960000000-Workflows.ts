import { MigrationInterface, QueryRunner } from "typeorm";

export class Workflows1795960000000 implements MigrationInterface {
    name = 'Workflows1795960000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            ALTER TABLE "executions" ADD "kind" text NOT NULL DEFAULT 'tool'
        `);
        await queryRunner.query(`
            ALTER TABLE "executions" ADD "parent_execution_id" text
        `);
        await queryRunner.query(`
            ALTER TABLE "executions" ADD "step_key" text
        `);
        await queryRunner.query(`
            CREATE UNIQUE INDEX "idx_executions_parent_step" ON "executions" ("parent_execution_id", "step_key")
        `);
        await queryRunner.query(`
            CREATE TABLE "workflows" (
                "id" text NOT NULL,
                "account_id" text NOT NULL,
                "name" text NOT NULL,
                "version" integer NOT NULL,
                "document" jsonb NOT NULL,
                "publish" boolean NOT NULL DEFAULT false,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "pk_workflows" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`
            CREATE UNIQUE INDEX "idx_workflows_account_name" ON "workflows" ("account_id", "name")
        `);
        await queryRunner.query(`
            ALTER TABLE "workflows"
            ADD CONSTRAINT "fk_workflows_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
        await queryRunner.query(`
            CREATE TABLE "workflow_versions" (
                "workflow_id" text NOT NULL,
                "version" integer NOT NULL,
                "document" jsonb NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "pk_workflow_versions" PRIMARY KEY ("workflow_id", "version")
            )
        `);
        await queryRunner.query(`
            ALTER TABLE "workflow_versions"
            ADD CONSTRAINT "fk_workflow_versions_workflow" FOREIGN KEY ("workflow_id") REFERENCES "workflows"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
        await queryRunner.query(`
            CREATE TABLE "workflow_runs" (
                "execution_id" text NOT NULL,
                "account_id" text NOT NULL,
                "workflow_id" text NOT NULL,
                "version" integer NOT NULL,
                "document" jsonb NOT NULL,
                "principal" jsonb NOT NULL,
                "state" jsonb NOT NULL,
                "wake" integer NOT NULL DEFAULT 0,
                "lease_until" TIMESTAMP WITH TIME ZONE,
                "leased_by" text,
                "schedule_id" text,
                "trigger_id" text,
                CONSTRAINT "pk_workflow_runs" PRIMARY KEY ("execution_id")
            )
        `);
        await queryRunner.query(`
            ALTER TABLE "workflow_runs"
            ADD CONSTRAINT "fk_workflow_runs_execution" FOREIGN KEY ("execution_id") REFERENCES "executions"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`DROP TABLE "workflow_runs"`);
        await queryRunner.query(`DROP TABLE "workflow_versions"`);
        await queryRunner.query(`DROP TABLE "workflows"`);
        await queryRunner.query(`DROP INDEX "idx_executions_parent_step"`);
        await queryRunner.query(`ALTER TABLE "executions" DROP COLUMN "step_key"`);
        await queryRunner.query(`ALTER TABLE "executions" DROP COLUMN "parent_execution_id"`);
        await queryRunner.query(`ALTER TABLE "executions" DROP COLUMN "kind"`);
    }
}
