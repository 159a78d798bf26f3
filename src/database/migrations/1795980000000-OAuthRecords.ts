import { MigrationInterface, QueryRunner } from "typeorm";

export class OAuthRecords1795980000000 implements MigrationInterface {
    name = 'OAuthRecords1795980000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            CREATE TABLE "oauth_records" (
                "model" text NOT NULL,
                "id" text NOT NULL,
                "payload" jsonb NOT NULL,
                "grant_id" text,
                "uid" text,
                "account_id" text,
                "expires_at" TIMESTAMP WITH TIME ZONE,
                "consumed_at" TIMESTAMP WITH TIME ZONE,
                CONSTRAINT "pk_oauth_records" PRIMARY KEY ("model", "id")
            )
        `);
        await queryRunner.query(`CREATE INDEX "ix_oauth_records_grant" ON "oauth_records" ("grant_id")`);
        await queryRunner.query(`CREATE INDEX "ix_oauth_records_uid" ON "oauth_records" ("uid")`);
        await queryRunner.query(`CREATE INDEX "ix_oauth_records_account" ON "oauth_records" ("account_id", "model")`);
        await queryRunner.query(`CREATE INDEX "ix_oauth_records_expires" ON "oauth_records" ("expires_at")`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`DROP TABLE "oauth_records"`);
    }

}
