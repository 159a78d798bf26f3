import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsObject, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { PageQuery } from '../common/pagination';
import { CurrentPrincipal, RequireScopes } from '../identity/auth.decorators';
import type { Principal } from '../identity/principal';
import { ORCHESTRATION_LIMITS } from '../identity/tiers';
import { CATCH_UP_POLICIES, OVERLAP_POLICIES, type CatchUpPolicy, type OverlapPolicy } from './schedule.entity';
import { KEY_ID_PATTERN, KEY_ID_PROPERTY } from './key-principals';
import { SchedulesService } from './schedules.service';

const TARGET_SCHEMA = {
  type: 'object',
  description: 'Exactly one of `tool` (a tool id) and `workflow` (a workflow id or name, kept as its id), and the target’s `inputs`.',
  properties: { tool: { type: 'string' }, workflow: { type: 'string' }, inputs: { type: 'object', additionalProperties: true } },
} as const;

export class CreateScheduleDto {
  @ApiProperty(TARGET_SCHEMA)
  @IsObject()
  target: Record<string, unknown>;

  @ApiProperty({ maxLength: 120, example: '30 2 * * *', description: 'Five fields (minute first), or six with seconds first; the tier sets the shortest interval.' })
  @IsString() @MaxLength(120)
  cron: string;

  @ApiPropertyOptional({ maxLength: 64, default: 'UTC', example: 'Europe/Berlin', description: 'IANA time zone the expression is read in.' })
  @IsOptional() @IsString() @MaxLength(64)
  timezone?: string;

  @ApiPropertyOptional({ enum: OVERLAP_POLICIES, default: 'skip', description: 'A tick while the previous run is still active: skip it, queue it behind, or allow both.' })
  @IsOptional() @IsIn(OVERLAP_POLICIES)
  overlap?: OverlapPolicy;

  @ApiPropertyOptional({ enum: CATCH_UP_POLICIES, default: 'none', description: 'Ticks missed while no process ran: none (recorded as missed) or last (run once, now).' })
  @IsOptional() @IsIn(CATCH_UP_POLICIES)
  catch_up?: CatchUpPolicy;

  @ApiPropertyOptional({ default: false })
  @IsOptional() @IsBoolean()
  paused?: boolean;

  @ApiPropertyOptional(KEY_ID_PROPERTY)
  @IsOptional() @IsString() @Matches(KEY_ID_PATTERN, { message: 'key_id must be an API key id (key_…)' })
  key_id?: string;
}

export class UpdateScheduleDto {
  @ApiPropertyOptional({ maxLength: 120 })
  @IsOptional() @IsString() @MaxLength(120)
  cron?: string;

  @ApiPropertyOptional({ maxLength: 64 })
  @IsOptional() @IsString() @MaxLength(64)
  timezone?: string;

  @ApiPropertyOptional({ enum: OVERLAP_POLICIES })
  @IsOptional() @IsIn(OVERLAP_POLICIES)
  overlap?: OverlapPolicy;

  @ApiPropertyOptional({ enum: CATCH_UP_POLICIES })
  @IsOptional() @IsIn(CATCH_UP_POLICIES)
  catch_up?: CatchUpPolicy;

  @ApiPropertyOptional({ description: 'true pauses; false resumes from the next tick after now, as the calling key.' })
  @IsOptional() @IsBoolean()
  paused?: boolean;

  @ApiPropertyOptional(KEY_ID_PROPERTY)
  @IsOptional() @IsString() @Matches(KEY_ID_PATTERN, { message: 'key_id must be an API key id (key_…)' })
  key_id?: string;
}

/** Schedules of the caller's account and their runs (docs/orchestration.md#schedules). */
@Controller('v1/schedules')
@RequireScopes('orchestration:manage')
export class SchedulesController {
  constructor(private readonly schedules: SchedulesService) {}

  @Post()
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateScheduleDto) {
    return this.schedules.create(principal, body);
  }

  @Get()
  async list(@CurrentPrincipal() principal: Principal, @Query() page: PageQuery) {
    const { schedules, total } = await this.schedules.list(principal, page.limit, page.offset);
    return { schedules, total, limit: page.limit, offset: page.offset, max_schedules: ORCHESTRATION_LIMITS[principal.tier].schedules };
  }

  @Get(':schedule_id')
  get(@CurrentPrincipal() principal: Principal, @Param('schedule_id') id: string) {
    return this.schedules.get(principal, id);
  }

  @Patch(':schedule_id')
  update(@CurrentPrincipal() principal: Principal, @Param('schedule_id') id: string, @Body() body: UpdateScheduleDto) {
    return this.schedules.update(principal, id, body);
  }

  @Delete(':schedule_id')
  @HttpCode(204)
  async delete(@CurrentPrincipal() principal: Principal, @Param('schedule_id') id: string): Promise<void> {
    await this.schedules.delete(principal, id);
  }

  @Get(':schedule_id/runs')
  async runs(@CurrentPrincipal() principal: Principal, @Param('schedule_id') id: string, @Query() page: PageQuery) {
    const { runs, total } = await this.schedules.runsOf(principal, id, page.limit, page.offset);
    return { runs, total, limit: page.limit, offset: page.offset };
  }
}
