import { MigrationInterface, QueryRunner } from "typeorm";

export class AccountMembers1796000000000 implements MigrationInterface {
    name = 'AccountMembers1796000000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            CREATE TABLE "account_members" (
                "id" text NOT NULL,
                "account_id" text NOT NULL,
                "issuer" text NOT NULL,
                "subject" text NOT NULL,
                "email" text,
                "role" text NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "last_sign_in_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "pk_account_members" PRIMARY KEY ("id"),
                CONSTRAINT "fk_account_members_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
            )
        `);
        await queryRunner.query(`CREATE UNIQUE INDEX "uq_account_members_identity" ON "account_members" ("account_id", "issuer", "subject")`);
        await queryRunner.query(`CREATE INDEX "ix_account_members_subject" ON "account_members" ("issuer", "subject")`);
        await queryRunner.query(`ALTER TABLE "console_sessions" ALTER COLUMN "link_id" DROP NOT NULL`);
        await queryRunner.query(`ALTER TABLE "console_sessions" ADD "member_id" text`);
        await queryRunner.query(`
            ALTER TABLE "console_sessions"
            ADD CONSTRAINT "fk_console_sessions_member" FOREIGN KEY ("member_id") REFERENCES "account_members"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`DELETE FROM "console_sessions" WHERE "member_id" IS NOT NULL`);
        await queryRunner.query(`ALTER TABLE "console_sessions" DROP CONSTRAINT "fk_console_sessions_member"`);
        await queryRunner.query(`ALTER TABLE "console_sessions" DROP COLUMN "member_id"`);
        await queryRunner.query(`ALTER TABLE "console_sessions" ALTER COLUMN "link_id" SET NOT NULL`);
        await queryRunner.query(`DROP TABLE "account_members"`);
    }

}
