/**
 * The tool test kit: `runTool` runs a tool the way the service does (schema defaults and
 * validation, a real context, output checked against the declared outputs) without Nest.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import 'reflect-metadata';
import { AppException } from '../../common/errors';
import { createToolContext, type ToolContextParts } from '../context/tool-context';
import { EgressPool } from '../egress/egress';
import { askThenExecute } from '../caller-questions';
import { readToolSettings } from '../tool-settings';
import type { RegisteredTool } from '../tool-catalogue';
import { ToolCompiler } from '../tool-compiler';
import { createWorkspace } from '../workspace';
import type { ToolHandler, ToolLogger, ToolSettingValue } from './context';
import { ToolMetadata, type ToolDefinition } from './definition';
import { ToolError } from './tool-error';

/** The egress exceptions tests run with: loopback only, never another address. */
export const LOOPBACK_ONLY = '127.0.0.0/8,::1';

export interface RunToolOverrides {
  /** Settings as the environment would give them (strings), typed by the declaration. */
  config?: Record<string, string>;
  /** Account secrets the call sees through ctx.secrets. */
  secrets?: Record<string, string>;
  /** Workspace root; an empty temp directory when omitted. */
  workspaceRoot?: string;
  signal?: AbortSignal;
  /** EGRESS_ALLOW for the call; loopback only by default. */
  egressAllow?: string;
  /** EGRESS_DNS_SERVERS for the call (a loopback dnsmasq answering, say, 10.0.0.1: the policy refuses it, no packet leaves). */
  dnsServers?: readonly string[];
  /** PEM certificates trusted for outbound TLS besides the public roots (EGRESS_CA_FILE's role). */
  tlsCa?: string;
  onProgress?: (percent: number, message?: string) => void;
  logger?: ToolLogger;
  /** ctx.executionId; `exec_runtool` when omitted. */
  executionId?: string;
  /**
   * The caller's answers to the tool's questions (`ctx.requestInput`), by key; with them the
   * caller can be asked. A question without an answer fails the run naming it.
   */
  answers?: Record<string, Record<string, unknown>>;
}

type ToolClass = new (...args: never[]) => ToolHandler;

const silentLogger: ToolLogger = { debug() {}, info() {}, warn() {}, error() {} };
const compiler = new ToolCompiler();
/** The test process's dispatchers, one per egress settings, as a service process has (kept for its life, like its connections). */
const egresses = new EgressPool();
/** Compiled once per definition, as the service does at boot (settings are read per run, from the overrides). */
const compiled = new WeakMap<ToolDefinition, RegisteredTool>();

/** The `@Tool({...})` definition of a tool class or instance. */
export function definitionOf(tool: ToolClass | ToolHandler): ToolDefinition {
  const target = typeof tool === 'function' ? tool : tool.constructor;
  const definition = Reflect.getMetadata(ToolMetadata.KEY, target) as ToolDefinition | undefined;
  if (!definition) throw new Error(`${target.name} is not decorated with @Tool`);
  return definition;
}

/**
 * Runs one call: validates `input` (defaults applied; INVALID_REQUEST/INVALID_INPUT as a
 * ToolError-shaped error), runs the tool with a real context, checks the output.
 * A class is constructed without arguments; pass an instance when it injects clients.
 */
export async function runTool<O = Record<string, unknown>>(tool: ToolClass | ToolHandler, input: Record<string, unknown>, overrides: RunToolOverrides = {}): Promise<O> {
  const definition = definitionOf(tool);
  const handler = typeof tool === 'function' ? new tool() : tool;
  const registered = compiled.get(definition) ?? compiled.set(definition, compiler.compile(definition, handler, { className: handler.constructor.name, isolate: false, environment: {}, publicUrl: 'http://127.0.0.1' })).get(definition)!;
  const validInput = validated(() => registered.validateInput(structuredClone(input)));
  const ownRoot = overrides.workspaceRoot ? null : mkdtempSync(path.join(tmpdir(), 'run-tool-'));
  const config: Readonly<Record<string, ToolSettingValue | undefined>> = readToolSettings(definition.id, definition.config ?? {}, overrides.config ?? {});
  const secrets = overrides.secrets ?? {};
  const egress = { allow: overrides.egressAllow ?? LOOPBACK_ONLY, extraCa: overrides.tlsCa, dnsServers: overrides.dnsServers };
  try {
    const output = await askThenExecute(
      handler,
      validInput,
      createToolContext({
        executionId: overrides.executionId ?? 'exec_runtool',
        signal: overrides.signal ?? new AbortController().signal,
        progress: (percent, message) => overrides.onProgress?.(percent, message),
        logger: overrides.logger ?? silentLogger,
        config,
        workspace: createWorkspace(overrides.workspaceRoot ?? (ownRoot as string)),
        egress,
        accountId: 'acct_runtool',
        accountSecrets: { find: async (_account, name) => secrets[name] },
        ...(overrides.answers && answering(overrides.answers)),
      }, egresses.for(egress)),
    );
    const problem = registered.outputProblem(output);
    if (problem) throw new Error(`Tool '${definition.id}' broke its declared outputs: ${problem}`);
    return output as O;
  } finally {
    if (ownRoot) rmSync(ownRoot, { recursive: true, force: true });
  }
}

function answering(answers: Record<string, Record<string, unknown>>): Pick<ToolContextParts, 'requestInput' | 'canAsk'> {
  return {
    requestInput: async (key, request) => {
      if (!Object.hasOwn(answers, key)) {
        const message = request.method === 'elicitation/create' ? `: ${request.params.message}` : '';
        throw new Error(`The tool asked '${key}' (${request.method}${message}) and the test gave no answer to it`);
      }
      return answers[key];
    },
    canAsk: () => true,
  };
}

/**
 * The ToolError a call failed with, for assertions on its code, details and message; a call that
 * succeeds fails the test, and any other error is rethrown.
 */
export async function toolFailure(call: Promise<unknown>): Promise<ToolError> {
  const outcome = await call.then(
    (value) => ({ failed: false as const, value }),
    (error: unknown) => ({ failed: true as const, error }),
  );
  if (!outcome.failed) throw new Error(`Expected the call to fail with a ToolError; it returned ${JSON.stringify(outcome.value)?.slice(0, 500)}`);
  if (!(outcome.error instanceof ToolError)) throw outcome.error;
  return outcome.error;
}

/** The service's input errors as the ToolError shape tools and tests already know. */
function validated<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (!(err instanceof AppException)) throw err;
    const { code, message, details, suggestion } = err.body;
    throw Object.assign(new ToolError(message, { code: code as 'INVALID_INPUT', details, suggestion }), { code });
  }
}
