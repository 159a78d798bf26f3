import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

const toInt = ({ value }: { value: unknown }) => (typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value);

/** `limit` (default 50, max 100) and `offset` (default 0): docs/API.md#paging. */
export class PageQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 50 })
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(100)
  limit: number = 50;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 1_000_000, default: 0 })
  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(1_000_000)
  offset: number = 0;
}

