import { TOOL_ID } from '../identity/tool-id';
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { PageQuery } from '../common/pagination';
import { CurrentPrincipal, RequireScopes } from '../identity/auth.decorators';
import type { Principal } from '../identity/principal';
import { DELIVERY_STATUSES, type DeliveryStatus } from './webhook-delivery.entity';
import { WEBHOOK_EVENTS } from './webhook-outbox';
import { MAX_WEBHOOKS_PER_ACCOUNT, WebhooksService } from './webhooks.service';


export class CreateWebhookDto {
  @ApiProperty({ format: 'uri', maxLength: 2048, description: 'http(s); checked against the egress policy here and at every delivery.' })
  @IsString() @MaxLength(2048)
  url: string;

  @ApiProperty({ enum: WEBHOOK_EVENTS, isArray: true, minItems: 1 })
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(WEBHOOK_EVENTS.length) @IsIn(WEBHOOK_EVENTS, { each: true })
  events: string[];

  @ApiPropertyOptional({ type: [String], maxItems: 200, description: 'Only these tools’ executions; absent or empty: every tool (a key narrowed to some tools must list them).' })
  @IsOptional() @IsArray() @ArrayMaxSize(200) @IsString({ each: true }) @Matches(TOOL_ID, { each: true })
  tool_ids?: string[];

  @ApiPropertyOptional({ maxLength: 500 })
  @IsOptional() @IsString() @MaxLength(500)
  description?: string;
}

export class UpdateWebhookDto {
  @ApiPropertyOptional({ format: 'uri', maxLength: 2048 })
  @IsOptional() @IsString() @MaxLength(2048)
  url?: string;

  @ApiPropertyOptional({ enum: WEBHOOK_EVENTS, isArray: true, minItems: 1 })
  @IsOptional() @IsArray() @ArrayMinSize(1) @ArrayMaxSize(WEBHOOK_EVENTS.length) @IsIn(WEBHOOK_EVENTS, { each: true })
  events?: string[];

  @ApiPropertyOptional({ type: [String], maxItems: 200, nullable: true })
  @IsOptional() @IsArray() @ArrayMaxSize(200) @IsString({ each: true }) @Matches(TOOL_ID, { each: true })
  tool_ids?: string[] | null;

  @ApiPropertyOptional({ maxLength: 500, nullable: true })
  @IsOptional() @IsString() @MaxLength(500)
  description?: string | null;

  @ApiPropertyOptional({ description: 'false pauses deliveries; true re-enables a subscription the service disabled (410, schedule exhausted).' })
  @IsOptional() @IsBoolean()
  enabled?: boolean;
}

export class DeliveryQuery extends PageQuery {
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES })
  @IsOptional() @IsIn(DELIVERY_STATUSES)
  status?: DeliveryStatus;

  @ApiPropertyOptional({ enum: [...WEBHOOK_EVENTS, 'ping'] })
  @IsOptional() @IsIn([...WEBHOOK_EVENTS, 'ping'])
  event?: string;
}

/** Webhook subscriptions of the caller's account and their delivery log (docs/API.md#webhooks). */
@Controller('v1/webhooks')
@RequireScopes('webhooks:manage')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  /** 201 with the signing secret, shown this once. */
  @Post()
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateWebhookDto) {
    return this.webhooks.create(principal, body);
  }

  @Get()
  async list(@CurrentPrincipal() principal: Principal, @Query() page: PageQuery) {
    const { webhooks, total } = await this.webhooks.list(principal, page.limit, page.offset);
    return { webhooks, total, limit: page.limit, offset: page.offset, max_webhooks: MAX_WEBHOOKS_PER_ACCOUNT };
  }

  @Get(':webhook_id')
  get(@CurrentPrincipal() principal: Principal, @Param('webhook_id') id: string) {
    return this.webhooks.get(principal, id);
  }

  @Patch(':webhook_id')
  update(@CurrentPrincipal() principal: Principal, @Param('webhook_id') id: string, @Body() body: UpdateWebhookDto) {
    return this.webhooks.update(principal, id, body);
  }

  @Delete(':webhook_id')
  @HttpCode(204)
  async delete(@CurrentPrincipal() principal: Principal, @Param('webhook_id') id: string): Promise<void> {
    await this.webhooks.delete(principal, id);
  }

  /** A new secret, shown this once; the old one signs beside it until `previous_secret_expires_at`. */
  @Post(':webhook_id/rotate-secret')
  @HttpCode(200)
  rotateSecret(@CurrentPrincipal() principal: Principal, @Param('webhook_id') id: string) {
    return this.webhooks.rotateSecret(principal, id);
  }

  /** Queues a `ping` event: 202 with its delivery, which the delivery log then shows. */
  @Post(':webhook_id/test')
  @HttpCode(202)
  test(@CurrentPrincipal() principal: Principal, @Param('webhook_id') id: string) {
    return this.webhooks.ping(principal, id);
  }

  @Get(':webhook_id/deliveries')
  async deliveries(@CurrentPrincipal() principal: Principal, @Param('webhook_id') id: string, @Query() query: DeliveryQuery) {
    const { deliveries, total } = await this.webhooks.deliveryLog(principal, id, { status: query.status, event: query.event }, query.limit, query.offset);
    return { deliveries, total, limit: query.limit, offset: query.offset };
  }

  /** Sends a delivery again from the start of the schedule, under the same webhook-id: 202. */
  @Post(':webhook_id/deliveries/:delivery_id/redeliver')
  @HttpCode(202)
  redeliver(@CurrentPrincipal() principal: Principal, @Param('webhook_id') id: string, @Param('delivery_id') deliveryId: string) {
    return this.webhooks.redeliver(principal, id, deliveryId);
  }
}
