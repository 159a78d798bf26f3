import { MigrationInterface, QueryRunner } from 'typeorm';

/** Lets the webhook dispatcher's claim reach each subscription's due deliveries through the index, whatever the backlog. */
export class WebhookClaimIndex1795955000000 implements MigrationInterface {
    name = 'WebhookClaimIndex1795955000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`CREATE INDEX "idx_webhook_deliveries_pending_subscription" ON "webhook_deliveries" ("status", "subscription_id", "next_attempt_at") `);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`DROP INDEX "public"."idx_webhook_deliveries_pending_subscription"`);
    }
}
