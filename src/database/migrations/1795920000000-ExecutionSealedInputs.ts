import { MigrationInterface, QueryRunner } from "typeorm";

export class ExecutionSealedInputs1795920000000 implements MigrationInterface {
    name = 'ExecutionSealedInputs1795920000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            ALTER TABLE "executions"
            ADD "sealed_inputs" jsonb
        `);
        await queryRunner.query(`
            ALTER TABLE "executions"
            ADD "unaskable" boolean
        `);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            ALTER TABLE "executions" DROP COLUMN "unaskable"
        `);
        await queryRunner.query(`
            ALTER TABLE "executions" DROP COLUMN "sealed_inputs"
        `);
    }

}
