import { MigrationInterface, QueryRunner } from "typeorm";

export class UpstreamCache1796050000000 implements MigrationInterface {
    name = 'UpstreamCache1796050000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "upstreams" ADD "cache_ttl_seconds" integer NOT NULL DEFAULT 0`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "upstreams" DROP COLUMN "cache_ttl_seconds"`);
    }
}
