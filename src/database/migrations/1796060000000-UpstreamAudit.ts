import { MigrationInterface, QueryRunner } from "typeorm";

export class UpstreamAudit1796060000000 implements MigrationInterface {
    name = 'UpstreamAudit1796060000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`CREATE TABLE "upstream_audit_events" ("id" text NOT NULL, "account_id" text, "actor" text NOT NULL, "action" text NOT NULL, "upstream_id" text NOT NULL, "upstream_name" text NOT NULL, "details" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "pk_upstream_audit_events" PRIMARY KEY ("id"))`);
        await queryRunner.query(`CREATE INDEX "idx_upstream_audit_account_time" ON "upstream_audit_events" ("account_id", "created_at") `);
        await queryRunner.query(`CREATE INDEX "idx_upstream_audit_upstream_time" ON "upstream_audit_events" ("upstream_id", "created_at") `);
        await queryRunner.query(`CREATE INDEX "idx_upstream_audit_time" ON "upstream_audit_events" ("created_at") `);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`DROP TABLE "upstream_audit_events"`);
    }
}
