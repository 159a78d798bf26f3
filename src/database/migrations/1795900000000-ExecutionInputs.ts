import { MigrationInterface, QueryRunner } from "typeorm";

export class ExecutionInputs1795900000000 implements MigrationInterface {
    name = 'ExecutionInputs1795900000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            ALTER TABLE "executions"
            ADD "input_requests" jsonb
        `);
        await queryRunner.query(`
            ALTER TABLE "executions"
            ADD "input_responses" jsonb
        `);
        await queryRunner.query(`
            ALTER TABLE "executions"
            ADD "waiting_since" TIMESTAMP WITH TIME ZONE
        `);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            ALTER TABLE "executions" DROP COLUMN "waiting_since"
        `);
        await queryRunner.query(`
            ALTER TABLE "executions" DROP COLUMN "input_responses"
        `);
        await queryRunner.query(`
            ALTER TABLE "executions" DROP COLUMN "input_requests"
        `);
    }

}
