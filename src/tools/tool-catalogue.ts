import type { ToolDefinition, ToolHandler, ToolSettingValue } from './sdk';
import type { ToolSource } from './isolation/tool-source';
import type { JsonSchema } from './tool-schema';

/** A tool's definition with every default filled in (`mcp` has none: absent means the id and JSON text). */
export type ResolvedDefinition = Required<Omit<ToolDefinition, 'mcp' | 'task_support'>> & Pick<ToolDefinition, 'mcp' | 'task_support'>;

/** A tool as the service runs it: its definition resolved, schemas compiled, settings read, views built (ToolCompiler). */
export interface RegisteredTool {
  definition: ResolvedDefinition;
  handler: ToolHandler;
  /** Set for `isolated` tools: the file a worker thread loads the class from. */
  source?: ToolSource;
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
  /** The tool's declared settings, read from the environment and typed once at boot. */
  config: Readonly<Record<string, ToolSettingValue | undefined>>;
  /** Names of the declared settings marked `secret`: an account may hold its own value of each. */
  secretSettings: readonly string[];
  summary: Record<string, unknown>;
  /** The summary with each input and output as its type name (GET /v1/tools?view=compact). */
  compact: Record<string, unknown>;
  detail: Record<string, unknown>;
  /** Validates in place: applies defaults, strips unknown members; throws the errors of docs/API.md#which-400. */
  validateInput(input: Record<string, unknown>): Record<string, unknown>;
  /** Why a result breaks the declared outputs, or null when it conforms. */
  outputProblem(result: unknown): string | null;
}

export interface ToolFilter {
  category?: string;
  status?: string;
  search?: string;
  /** Only these ids (a key's tool restriction); null = all. */
  allowed?: ReadonlySet<string> | null;
}

/** The registered tools, read-only: all that other modules may know of the registry (its injection token too). */
export abstract class ToolCatalogue {
  /** HTTP date the catalogue was built: it changes only with a deploy (Last-Modified of tool reads). */
  abstract readonly loadedAt: string;
  abstract has(id: string): boolean;
  abstract get(id: string): RegisteredTool;
  abstract all(): RegisteredTool[];
  abstract list(filter?: ToolFilter): RegisteredTool[];
}
