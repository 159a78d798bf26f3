import { plainToInstance, Transform } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  validateSync,
} from 'class-validator';
import { SERVICE_KEY_PATTERN } from '../keys/key-secret';
import { TIERS, Tier } from '../keys/tiers';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const toInt = ({ value }: { value: unknown }) => (value === undefined || value === '' ? undefined : Number(value));
const emptyToUndefined = ({ value }: { value: unknown }) => (value === '' ? undefined : value);

/** The process environment the service reads, with defaults; validated once at start-up. */
export class AppConfig {
  @Transform(toInt) @IsInt() @Min(0) @Max(65535)
  PORT = 3000;

  @IsString() @MinLength(1)
  HOST = '127.0.0.1';

  /** PostgreSQL when set; PGlite in DATA_DIR otherwise. */
  @Transform(emptyToUndefined) @IsOptional() @Matches(/^postgres(ql)?:\/\/.+/, { message: 'DATABASE_URL must be a postgres:// URL' })
  DATABASE_URL?: string;

  @IsString() @MinLength(1)
  DATA_DIR = './data';

  @Transform(toInt) @IsInt() @Min(1) @Max(500)
  DATABASE_POOL_SIZE = 10;

  /** A service key `sk_svc_…` seeded into account `default` at start-up. */
  @Transform(emptyToUndefined) @IsOptional() @Matches(SERVICE_KEY_PATTERN, { message: 'BOOTSTRAP_API_KEY must look like sk_svc_ followed by 32 letters or digits' })
  BOOTSTRAP_API_KEY?: string;

  @IsIn(TIERS)
  BOOTSTRAP_TIER: Tier = 'free';

  @IsString() @MinLength(1)
  WORKSPACE_ROOT = './workspace';

  @IsIn(LOG_LEVELS)
  LOG_LEVEL: (typeof LOG_LEVELS)[number] = 'info';

  /** Base URL clients reach the service at; used for documentation links. */
  @Transform(emptyToUndefined) @IsOptional() @IsUrl({ require_tld: false, require_protocol: true })
  @MaxLength(2048)
  PUBLIC_URL?: string;

  /** How long a verified key stays in the in-process cache; a revoke clears it at once. */
  @Transform(toInt) @IsInt() @Min(0) @Max(3600)
  AUTH_CACHE_TTL_SECONDS = 30;

  get publicUrl(): string {
    return (this.PUBLIC_URL ?? `http://localhost:${this.PORT}`).replace(/\/+$/, '');
  }
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Reads and validates configuration; throws ConfigError naming each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const known = Object.keys(new AppConfig());
  const picked = Object.fromEntries(known.filter((name) => env[name] !== undefined).map((name) => [name, env[name]]));
  const config = plainToInstance(AppConfig, picked);
  const errors = validateSync(config, { forbidUnknownValues: true });
  if (errors.length > 0) {
    const lines = errors.map((e) => `  ${e.property}=${JSON.stringify(env[e.property])}: ${Object.values(e.constraints ?? {}).join('; ')}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return config;
}
