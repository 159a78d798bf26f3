import { MigrationInterface, QueryRunner } from "typeorm";

export class ExecutionDeadlines1795870000000 implements MigrationInterface {
    name = 'ExecutionDeadlines1795870000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            ALTER TABLE "executions"
            ADD "timeout_seconds" integer
        `);
        await queryRunner.query(`
            CREATE INDEX "idx_executions_status" ON "executions" ("status")
        `);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            DROP INDEX "public"."idx_executions_status"
        `);
        await queryRunner.query(`
            ALTER TABLE "executions" DROP COLUMN "timeout_seconds"
        `);
    }

}
