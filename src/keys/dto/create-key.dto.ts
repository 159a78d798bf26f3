import { TOOL_ID } from '../../identity/tool-id';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength } from 'class-validator';
import { SCOPES, Scope } from '../../identity/scopes';
import { KEY_TYPE_ALIASES, KeyType } from '../../identity/key-secret';
import { MAX_TEMPORARY_KEY_SECONDS } from '../api-keys.service';

export class CreateKeyDto {
  @ApiProperty({ minLength: 1, maxLength: 100 })
  @IsString() @MinLength(1) @MaxLength(100)
  name: string;

  /** user | service | svc | temporary | temp, normalised to the canonical type. */
  @ApiProperty({ enum: Object.keys(KEY_TYPE_ALIASES) })
  @IsIn(Object.keys(KEY_TYPE_ALIASES), { message: `type must be one of: ${Object.keys(KEY_TYPE_ALIASES).join(', ')}` })
  type: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_TEMPORARY_KEY_SECONDS, description: 'Seconds; temporary keys only (required for them).' })
  @IsOptional() @IsInt() @Min(1) @Max(MAX_TEMPORARY_KEY_SECONDS)
  expires_in?: number;

  @ApiPropertyOptional({ enum: SCOPES, isArray: true })
  @IsOptional() @IsArray() @ArrayMaxSize(SCOPES.length) @IsIn(SCOPES, { each: true })
  scopes?: Scope[];

  @ApiPropertyOptional({ type: [String], maxItems: 200 })
  @IsOptional() @IsArray() @ArrayMaxSize(200) @IsString({ each: true }) @Matches(TOOL_ID, { each: true, message: 'each value in tool_ids must be a tool id' })
  tool_ids?: string[];

  @ApiPropertyOptional({ type: 'boolean', default: false, description: 'Requests made with the key must carry X-Timestamp and X-Signature; the answer holds its signing_secret, once (docs/API.md#signed-requests).' })
  @IsOptional() @IsBoolean()
  require_signature?: boolean;

  get keyType(): KeyType {
    return KEY_TYPE_ALIASES[this.type];
  }
}

export class RotateKeyDto {
  /** Seconds until the old key stops working; absent = until it is revoked. */
  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 30 * 86_400 })
  @IsOptional() @IsInt() @Min(0) @Max(30 * 86_400)
  revoke_old_after?: number;
}
