import { MigrationInterface, QueryRunner } from "typeorm";

export class Orchestration1795970000000 implements MigrationInterface {
    name = 'Orchestration1795970000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "executions" ADD "schedule_id" text`);
        await queryRunner.query(`ALTER TABLE "executions" ADD "trigger_id" text`);
        await queryRunner.query(`
            CREATE TABLE "schedules" (
                "id" text NOT NULL,
                "account_id" text NOT NULL,
                "key_id" text NOT NULL,
                "target_kind" text NOT NULL,
                "target_id" text NOT NULL,
                "inputs" jsonb NOT NULL,
                "cron" text NOT NULL,
                "timezone" text NOT NULL,
                "overlap" text NOT NULL,
                "catch_up" text NOT NULL,
                "paused" boolean NOT NULL,
                "paused_reason" text,
                "next_run_at" TIMESTAMP WITH TIME ZONE,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "pk_schedules" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`CREATE INDEX "idx_schedules_account" ON "schedules" ("account_id", "id")`);
        await queryRunner.query(`CREATE INDEX "idx_schedules_due" ON "schedules" ("next_run_at") WHERE NOT "paused"`);
        await queryRunner.query(`
            CREATE TABLE "schedule_runs" (
                "id" text NOT NULL,
                "schedule_id" text NOT NULL,
                "account_id" text NOT NULL,
                "tick_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "status" text NOT NULL,
                "reason" text,
                "execution_id" text,
                "locked_until" TIMESTAMP WITH TIME ZONE,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "ended_at" TIMESTAMP WITH TIME ZONE,
                CONSTRAINT "pk_schedule_runs" PRIMARY KEY ("id"),
                CONSTRAINT "uq_schedule_runs_tick" UNIQUE ("schedule_id", "tick_at")
            )
        `);
        await queryRunner.query(`CREATE INDEX "idx_schedule_runs_pending" ON "schedule_runs" ("schedule_id", "tick_at") WHERE "status" = 'pending'`);
        await queryRunner.query(`
            CREATE TABLE "triggers" (
                "id" text NOT NULL,
                "account_id" text NOT NULL,
                "key_id" text NOT NULL,
                "target_kind" text NOT NULL,
                "target_id" text NOT NULL,
                "target_inputs" jsonb NOT NULL,
                "input_map" jsonb,
                "filter" text,
                "verification" text,
                "secret_key_id" text,
                "secret_sealed" text,
                "source_event" text,
                "source_tool_ids" text array,
                "description" text,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "pk_triggers" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`CREATE INDEX "idx_triggers_account" ON "triggers" ("account_id", "id")`);
        await queryRunner.query(`CREATE INDEX "idx_triggers_source" ON "triggers" ("account_id", "source_event") WHERE "source_event" IS NOT NULL`);
        await queryRunner.query(`
            CREATE TABLE "trigger_events" (
                "id" text NOT NULL,
                "trigger_id" text NOT NULL,
                "account_id" text NOT NULL,
                "delivery_id" text,
                "status" text NOT NULL,
                "reason" text,
                "payload" jsonb,
                "inputs" jsonb,
                "execution_id" text,
                "locked_until" TIMESTAMP WITH TIME ZONE,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "pk_trigger_events" PRIMARY KEY ("id"),
                CONSTRAINT "uq_trigger_events_delivery" UNIQUE ("trigger_id", "delivery_id")
            )
        `);
        await queryRunner.query(`CREATE INDEX "idx_trigger_events_trigger" ON "trigger_events" ("trigger_id", "id")`);
        await queryRunner.query(`CREATE INDEX "idx_trigger_events_pending" ON "trigger_events" ("created_at") WHERE "status" = 'pending'`);
        await queryRunner.query(`
            ALTER TABLE "schedules"
            ADD CONSTRAINT "fk_schedules_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
        await queryRunner.query(`
            ALTER TABLE "schedule_runs"
            ADD CONSTRAINT "fk_schedule_runs_schedule" FOREIGN KEY ("schedule_id") REFERENCES "schedules"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
        await queryRunner.query(`
            ALTER TABLE "triggers"
            ADD CONSTRAINT "fk_triggers_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
        await queryRunner.query(`
            ALTER TABLE "trigger_events"
            ADD CONSTRAINT "fk_trigger_events_trigger" FOREIGN KEY ("trigger_id") REFERENCES "triggers"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "trigger_events" DROP CONSTRAINT "fk_trigger_events_trigger"`);
        await queryRunner.query(`ALTER TABLE "triggers" DROP CONSTRAINT "fk_triggers_account"`);
        await queryRunner.query(`ALTER TABLE "schedule_runs" DROP CONSTRAINT "fk_schedule_runs_schedule"`);
        await queryRunner.query(`ALTER TABLE "schedules" DROP CONSTRAINT "fk_schedules_account"`);
        await queryRunner.query(`DROP TABLE "trigger_events"`);
        await queryRunner.query(`DROP TABLE "triggers"`);
        await queryRunner.query(`DROP TABLE "schedule_runs"`);
        await queryRunner.query(`DROP TABLE "schedules"`);
        await queryRunner.query(`ALTER TABLE "executions" DROP COLUMN "trigger_id"`);
        await queryRunner.query(`ALTER TABLE "executions" DROP COLUMN "schedule_id"`);
    }

}
