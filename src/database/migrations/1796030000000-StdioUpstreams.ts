import { MigrationInterface, QueryRunner } from "typeorm";

export class StdioUpstreams1796030000000 implements MigrationInterface {
    name = 'StdioUpstreams1796030000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "upstreams" ADD "stdio" jsonb`);
        await queryRunner.query(`ALTER TABLE "upstreams" ADD "shared" boolean NOT NULL DEFAULT false`);
        await queryRunner.query(`ALTER TABLE "upstreams" ADD "operator_registered" boolean NOT NULL DEFAULT false`);
        await queryRunner.query(`CREATE INDEX "idx_upstreams_shared" ON "upstreams" ("name") WHERE "shared"`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`DROP INDEX "idx_upstreams_shared"`);
        await queryRunner.query(`ALTER TABLE "upstreams" DROP COLUMN "operator_registered"`);
        await queryRunner.query(`ALTER TABLE "upstreams" DROP COLUMN "shared"`);
        await queryRunner.query(`ALTER TABLE "upstreams" DROP COLUMN "stdio"`);
    }
}
