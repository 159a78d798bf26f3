import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { Account } from '../keys/account.entity';

/**
 * How the service authenticates to an upstream, read from the account's secrets by name at call
 * time: a bearer token, an API key sent in a header (OpenAPI upstreams), or nothing.
 */
export type UpstreamAuth = { bearer_secret_name: string } | { api_key_header: string; api_key_secret_name: string } | { none: true };

/** Where an OpenAPI operation's inputs go: each parameter by its name and place, and whether it takes a JSON body. */
export interface HttpOperation {
  method: string;
  /** The path template as the document writes it, `{name}` placeholders included. */
  path: string;
  parameters: { name: string; in: 'path' | 'query' | 'header' }[];
  body: boolean;
  /** The 2xx answer's JSON schema is not an object's: the result is `{ body: <answer> }`. */
  wrapped?: boolean;
}

/** Which of the upstream's tools the account takes (names as the upstream lists them). */
export interface UpstreamToolFilter {
  include?: string[];
  exclude?: string[];
}

/** The names MCP allows a tool (2025-11-25 "Tool names"); any other is left out, so `<upstream>.<tool>` is safe in a URL path. */
export const UPSTREAM_TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** One tool as the upstream's tools/list gave it, kept as discovered. */
export interface DiscoveredTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  /** An OpenAPI upstream's operation behind the tool. */
  operation?: HttpOperation;
  /** Set when the upstream runs tools/call as tasks and this tool may (`optional`) or must (`required`) run as one (docs/upstreams.md#upstream-tasks). */
  task_support?: 'optional' | 'required';
}

/**
 * How a local stdio MCP server is started (docs/upstreams.md#local-stdio-servers): a command, or a
 * container image run on the Docker engine. Secrets are named, never held: `env_from_secrets` maps
 * an environment variable to one of the owning account's secrets, read when the process starts.
 */
export type StdioLaunchSpec =
  | { command: string; args: string[]; env_from_secrets: Record<string, string>; cwd?: string }
  | { image: string; args: string[]; env_from_secrets: Record<string, string>; allow_egress: boolean; user?: string };

/** An MCP server or OpenAPI operations an account registered (docs/upstreams.md): its tools join that account's catalogue as `<name>.<tool>`. */
@Entity('upstreams')
@Index('idx_upstreams_account_name', ['account_id', 'name'], { unique: true })
@Index('idx_upstreams_shared', ['name'], { where: '"shared"' })
export class Upstream {
  /** `up_` + 24 base62, time-ordered. */
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_upstreams' })
  id: string;

  @Column('text')
  account_id: string;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_upstreams_account' })
  account?: Account;

  @Column('text')
  name: string;

  @Column('text')
  transport: 'streamable-http' | 'openapi' | 'stdio';

  /** The MCP endpoint, or an OpenAPI upstream's base URL; empty for a stdio upstream. */
  @Column('text')
  url: string;

  /** Where an OpenAPI upstream's document was fetched from (refresh fetches it again); null when it was given inline. */
  @Column('text', { nullable: true })
  spec_url: string | null;

  /** A stdio upstream's command or image; null for the others. */
  @Column('jsonb', { nullable: true })
  stdio: StdioLaunchSpec | null;

  /** Operator-wide: its tools are in every account's catalogue, called with the owning (operator's) account's secrets. */
  @Column('boolean', { default: false })
  shared: boolean;

  /** Registered through an operator command: the owning account sees it but cannot change or delete it. */
  @Column('boolean', { default: false })
  operator_registered: boolean;

  /** Names a secret, never holds one. */
  @Column('jsonb')
  auth: UpstreamAuth;

  @Column('jsonb')
  tool_filter: UpstreamToolFilter;

  @Column('integer')
  timeout_seconds: number;

  /** How long a read-only tool's successful result is reused for the same key and input; 0 never (docs/upstreams.md#caching). */
  @Column('integer', { default: 0 })
  cache_ttl_seconds: number;

  @Column('boolean')
  enabled: boolean;

  /** Upstream tool names switched off by the account. */
  @Column('jsonb')
  disabled_tools: string[];

  /** The last discovery's tools, after the filter. */
  @Column('jsonb')
  tools: DiscoveredTool[];

  @Column('timestamptz', { nullable: true })
  last_contact_at: Date | null;

  @Column('text', { nullable: true })
  last_error: string | null;

  @Column('integer', { nullable: true })
  latency_ms: number | null;

  @Column('timestamptz')
  created_at: Date;

  @Column('timestamptz')
  updated_at: Date;
}
