import { MigrationInterface, QueryRunner } from "typeorm";

export class OpenApiUpstreams1796020000000 implements MigrationInterface {
    name = 'OpenApiUpstreams1796020000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "upstreams" ADD "spec_url" text`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "upstreams" DROP COLUMN "spec_url"`);
    }
}
