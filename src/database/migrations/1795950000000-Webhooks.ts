import { MigrationInterface, QueryRunner } from "typeorm";

export class Webhooks1795950000000 implements MigrationInterface {
    name = 'Webhooks1795950000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            CREATE TABLE "webhook_subscriptions" (
                "id" text NOT NULL,
                "account_id" text NOT NULL,
                "url" text NOT NULL,
                "events" text array NOT NULL,
                "tool_ids" text array,
                "description" text,
                "enabled" boolean NOT NULL DEFAULT true,
                "disabled_reason" text,
                "secret_key_id" text NOT NULL,
                "secret_sealed" text NOT NULL,
                "previous_secret_key_id" text,
                "previous_secret_sealed" text,
                "previous_secret_expires_at" TIMESTAMP WITH TIME ZONE,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "pk_webhook_subscriptions" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`
            CREATE INDEX "idx_webhook_subscriptions_account" ON "webhook_subscriptions" ("account_id", "id")
        `);
        await queryRunner.query(`
            CREATE TABLE "webhook_deliveries" (
                "id" text NOT NULL,
                "subscription_id" text NOT NULL,
                "account_id" text NOT NULL,
                "event" text NOT NULL,
                "execution_id" text,
                "data" jsonb NOT NULL,
                "event_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "status" text NOT NULL,
                "attempt_count" integer NOT NULL DEFAULT '0',
                "next_attempt_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "locked_until" TIMESTAMP WITH TIME ZONE,
                "attempts" jsonb NOT NULL,
                "last_error" text,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "delivered_at" TIMESTAMP WITH TIME ZONE,
                CONSTRAINT "pk_webhook_deliveries" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`
            CREATE INDEX "idx_webhook_deliveries_due" ON "webhook_deliveries" ("status", "next_attempt_at")
        `);
        await queryRunner.query(`
            CREATE INDEX "idx_webhook_deliveries_subscription" ON "webhook_deliveries" ("subscription_id", "id")
        `);
        await queryRunner.query(`
            ALTER TABLE "webhook_subscriptions"
            ADD CONSTRAINT "fk_webhook_subscriptions_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
        await queryRunner.query(`
            ALTER TABLE "webhook_deliveries"
            ADD CONSTRAINT "fk_webhook_deliveries_subscription" FOREIGN KEY ("subscription_id") REFERENCES "webhook_subscriptions"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "fk_webhook_deliveries_subscription"`);
        await queryRunner.query(`ALTER TABLE "webhook_subscriptions" DROP CONSTRAINT "fk_webhook_subscriptions_account"`);
        await queryRunner.query(`DROP TABLE "webhook_deliveries"`);
        await queryRunner.query(`DROP TABLE "webhook_subscriptions"`);
    }

}
