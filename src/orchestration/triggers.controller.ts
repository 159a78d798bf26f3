import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { IsObject, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { PageQuery } from '../common/pagination';
import { rawBodyOf } from '../common/raw-body';
import { CurrentPrincipal, Public, RequireScopes } from '../identity/auth.decorators';
import type { Principal } from '../identity/principal';
import { ORCHESTRATION_LIMITS } from '../identity/tiers';
import { TRIGGER_SOURCE_EVENTS } from '../webhooks/webhook-outbox';
import { VERIFICATION_TYPES } from './trigger.entity';
import { KEY_ID_PATTERN, KEY_ID_PROPERTY } from './key-principals';
import { TriggersService } from './triggers.service';

export class CreateTriggerDto {
  @ApiProperty({
    type: 'object',
    description: 'Exactly one of `tool` and `workflow` (a workflow id or name, kept as its id), and literal `inputs` (the mapping’s values override them).',
    properties: { tool: { type: 'string' }, workflow: { type: 'string' }, inputs: { type: 'object', additionalProperties: true } },
  })
  @IsObject()
  target: Record<string, unknown>;

  @ApiPropertyOptional({
    type: 'object',
    description: 'An inbound trigger: how its events are verified. `secret` is generated when absent (and shown once); one given must be 16 characters or more.',
    properties: { type: { type: 'string', enum: [...VERIFICATION_TYPES] }, secret: { type: 'string', minLength: 16 } },
    required: ['type'],
  })
  @IsOptional() @IsObject()
  verification?: { type: (typeof VERIFICATION_TYPES)[number]; secret?: string };

  @ApiPropertyOptional({
    type: 'object',
    description: 'An internal trigger: this service’s own execution events (of these tools; all when absent).',
    properties: { event: { type: 'string', enum: TRIGGER_SOURCE_EVENTS }, tool_ids: { type: 'array', items: { type: 'string' }, maxItems: 200 } },
    required: ['event'],
  })
  @IsOptional() @IsObject()
  source?: { event: string; tool_ids?: string[] };

  @ApiPropertyOptional({ maxLength: 10_000, description: 'JSONata over `{ payload, headers }`: a falsy value refuses the event (202, accepted false).' })
  @IsOptional() @IsString() @MaxLength(10_000)
  filter?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string', maxLength: 10_000 }, description: 'Target input name → JSONata over `{ payload, headers }`.' })
  @IsOptional() @IsObject()
  inputs?: Record<string, string>;

  @ApiPropertyOptional({ maxLength: 500 })
  @IsOptional() @IsString() @MaxLength(500)
  description?: string;

  @ApiPropertyOptional(KEY_ID_PROPERTY)
  @IsOptional() @IsString() @Matches(KEY_ID_PATTERN, { message: 'key_id must be an API key id (key_…)' })
  key_id?: string;
}

/** Triggers of the caller's account and their events log (docs/orchestration.md#triggers). */
@Controller('v1/triggers')
@RequireScopes('orchestration:manage')
export class TriggersController {
  constructor(private readonly triggers: TriggersService) {}

  /** 201 with an inbound trigger's secret, shown this once. */
  @Post()
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateTriggerDto) {
    return this.triggers.create(principal, body);
  }

  @Get()
  async list(@CurrentPrincipal() principal: Principal, @Query() page: PageQuery) {
    const { triggers, total } = await this.triggers.list(principal, page.limit, page.offset);
    return { triggers, total, limit: page.limit, offset: page.offset, max_triggers: ORCHESTRATION_LIMITS[principal.tier].triggers };
  }

  @Get(':trigger_id')
  get(@CurrentPrincipal() principal: Principal, @Param('trigger_id') id: string) {
    return this.triggers.get(principal, id);
  }

  @Delete(':trigger_id')
  @HttpCode(204)
  async delete(@CurrentPrincipal() principal: Principal, @Param('trigger_id') id: string): Promise<void> {
    await this.triggers.delete(principal, id);
  }

  @Get(':trigger_id/events')
  async events(@CurrentPrincipal() principal: Principal, @Param('trigger_id') id: string, @Query() page: PageQuery) {
    const { events, total } = await this.triggers.eventLog(principal, id, page.limit, page.offset);
    return { events, total, limit: page.limit, offset: page.offset };
  }

  /** The inbound URL: no API key, the trigger's verification instead (401 when it fails). */
  @Post(':trigger_id/events')
  @Public()
  @HttpCode(202)
  async receive(@Param('trigger_id') id: string, @Body() body: unknown, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const answer = await this.triggers.receive(id, request, rawBodyOf(request), body);
    reply.status(answer.httpStatus);
    return answer.body;
  }
}
