import { MigrationInterface, QueryRunner } from "typeorm";

export class AccountSecrets1795860000000 implements MigrationInterface {
    name = 'AccountSecrets1795860000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            CREATE TABLE "account_secrets" (
                "account_id" text NOT NULL,
                "name" text NOT NULL,
                "key_id" text NOT NULL,
                "sealed" text NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "pk_account_secrets" PRIMARY KEY ("account_id", "name")
            )
        `);
        await queryRunner.query(`
            ALTER TABLE "account_secrets"
            ADD CONSTRAINT "fk_account_secrets_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            ALTER TABLE "account_secrets" DROP CONSTRAINT "fk_account_secrets_account"
        `);
        await queryRunner.query(`
            DROP TABLE "account_secrets"
        `);
    }

}
