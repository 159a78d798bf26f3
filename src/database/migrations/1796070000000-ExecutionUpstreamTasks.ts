import { MigrationInterface, QueryRunner } from "typeorm";

export class ExecutionUpstreamTasks1796070000000 implements MigrationInterface {
    name = 'ExecutionUpstreamTasks1796070000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "executions" ADD "upstream_task" jsonb`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "executions" DROP COLUMN "upstream_task"`);
    }
}
