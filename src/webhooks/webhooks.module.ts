import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SecretsModule } from '../secrets/secrets.module';
import { ToolsModule } from '../tools/tools.module';
import { WebhookDelivery } from './webhook-delivery.entity';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhookSubscription } from './webhook-subscription.entity';
import { WebhooksService } from './webhooks.service';

/**
 * Webhook subscriptions and their delivery (docs/API.md#webhooks). The outbox rows are written
 * by the executions store (src/webhooks/webhook-outbox.ts); the WebhookDispatcher sends them in
 * processes of the worker role; the ApiModule declares the WebhooksController.
 */
@Module({
  imports: [TypeOrmModule.forFeature([WebhookSubscription, WebhookDelivery]), SecretsModule, ToolsModule],
  providers: [WebhooksService, WebhookDispatcher],
  exports: [WebhooksService],
})
export class WebhooksModule {}
