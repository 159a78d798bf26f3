import { MigrationInterface, QueryRunner } from "typeorm";

export class ExecutionClaims1795930000000 implements MigrationInterface {
    name = 'ExecutionClaims1795930000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            ALTER TABLE "executions"
            ADD "claimed_by" character varying
        `);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            ALTER TABLE "executions" DROP COLUMN "claimed_by"
        `);
    }

}
