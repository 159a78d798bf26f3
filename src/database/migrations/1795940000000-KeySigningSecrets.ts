import { MigrationInterface, QueryRunner } from "typeorm";

export class KeySigningSecrets1795940000000 implements MigrationInterface {
    name = 'KeySigningSecrets1795940000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            ALTER TABLE "api_keys"
            ADD "signing_secret_sealed" text
        `);
        await queryRunner.query(`
            ALTER TABLE "api_keys"
            ADD "signing_secret_key_id" text
        `);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            ALTER TABLE "api_keys" DROP COLUMN "signing_secret_key_id"
        `);
        await queryRunner.query(`
            ALTER TABLE "api_keys" DROP COLUMN "signing_secret_sealed"
        `);
    }

}
