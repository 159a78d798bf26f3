/**
 * A real ToolContext for tool unit tests: a sandboxed workspace on a directory, an
 * AbortController the test can fire, and progress calls recorded for assertions.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import 'reflect-metadata';
import { ToolMetadata, type ToolContext, type ToolDefinition, type ToolLogger } from '../../src/tools/sdk';
import { createWorkspace } from '../../src/tools/workspace';
import { createToolContext } from '../../src/tools/context/tool-context';
import { LOOPBACK_ONLY } from '../../src/tools/sdk/testing';

export interface TestToolContextOptions {
  /** Workspace root; an empty temp directory when omitted. */
  root?: string;
  executionId?: string;
  config?: Record<string, string | undefined>;
  logger?: ToolLogger;
}

export interface TestToolContext extends ToolContext {
  /** Aborting it aborts `signal`, as a cancel or timeout would. */
  readonly controller: AbortController;
  readonly progressCalls: { percent: number; message?: string }[];
}

const silentLogger: ToolLogger = { debug() {}, info() {}, warn() {}, error() {} };

/** One empty directory per test file, removed after it: tools only read their workspace. */
const emptyRoot = mkdtempSync(path.join(tmpdir(), 'tool-workspace-'));
afterAll(() => rmSync(emptyRoot, { recursive: true, force: true }));

export function createTestToolContext(options: TestToolContextOptions = {}): TestToolContext {
  const controller = new AbortController();
  const progressCalls: { percent: number; message?: string }[] = [];
  const root = options.root ?? emptyRoot;
  const context = createToolContext({
    executionId: options.executionId ?? 'exec_test',
    signal: controller.signal,
    progress: (percent, message) => void progressCalls.push(message === undefined ? { percent } : { percent, message }),
    logger: options.logger ?? silentLogger,
    config: options.config ?? {},
    workspace: createWorkspace(root),
    egress: { allow: LOOPBACK_ONLY },
    accountId: null,
  });
  return Object.assign(context, { controller, progressCalls });
}

/** The `@Tool({...})` definition of a tool class, e.g. to run its examples. */
export function toolDefinition(toolClass: abstract new (...args: never[]) => unknown): ToolDefinition {
  return Reflect.getMetadata(ToolMetadata.KEY, toolClass) as ToolDefinition;
}
