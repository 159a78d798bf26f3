/** What the file-reading scanners share: JS/TS source selection, one read loop, their input and output definitions. */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { ToolError, type ToolContext, type ToolInputProperty, type ToolOutputProperty, type WorkspaceFile, workspacePathInput } from '@tos/sdk';

/** Files a walk may meet (node_modules and .git are never walked). */
const MAX_LISTED_FILES = 20_000;
const SOURCE = /\.(?:[cm]?[jt]s|[jt]sx)$/i;
const NOT_SOURCE = /(?:\.d\.[cm]?ts|\.min\.js)$/i;

export type FileErrors = Array<{ file: string; message: string }>;

/** The JavaScript/TypeScript sources under `path` (or its `files`), at most `max`. */
export async function listSourceFiles(ctx: ToolContext, input: { path: string; files?: string[] }, max: number): Promise<WorkspaceFile[]> {
  const listed = await ctx.workspace.listFiles(input.path, { files: input.files, maxFiles: MAX_LISTED_FILES }, 'path');
  const sources = listed.filter((file) => SOURCE.test(file.path) && !NOT_SOURCE.test(file.path));
  if (sources.length > max) {
    throw ToolError.invalidInput('path', `at most ${max} source files`, input.path, `More than ${max} source files under '${input.path}'; narrow the path or list files`);
  }
  return sources;
}

/**
 * Each file's text, in order: watches the signal, reports progress per file, lets the event loop
 * breathe, and lists a file over `maxBytes` in `errors` instead of reading it.
 */
export async function* eachFileText(ctx: ToolContext, files: WorkspaceFile[], maxBytes: number, errors: FileErrors, verb: string): AsyncGenerator<{ file: WorkspaceFile; text: string }> {
  for (const [index, file] of files.entries()) {
    ctx.signal.throwIfAborted();
    ctx.progress(Math.floor((index / files.length) * 100), `file ${index + 1} of ${files.length}: ${file.path}`);
    await yieldToEventLoop();
    if (file.size > maxBytes) {
      errors.push({ file: file.path, message: `Not ${verb}: ${file.size} bytes, over the limit of ${maxBytes}` });
      continue;
    }
    yield { file, text: await ctx.workspace.readText(file.path, maxBytes, 'path') };
  }
}

/** `path` and `files` of a tool that reads JavaScript and TypeScript sources. */
export function sourceFilesInputs(verb: string, maxFiles: number, maxBytes: number) {
  return {
    path: workspacePathInput(`A source file or a directory in the workspace: .js, .jsx, .mjs, .cjs, .ts, .tsx, .mts and .cts files are ${verb} (not .d.ts or .min.js; at most ${maxFiles} files of up to ${maxBytes / 1024 / 1024} MiB; installed dependencies and .git are skipped).`),
    files: { type: 'array', maxItems: 1000, items: { type: 'string', minLength: 1, maxLength: 1024 }, description: 'Only these files, relative to the directory given as path.' },
  } as const satisfies Record<string, ToolInputProperty>;
}

/** The `errors` output: files passed over, with why. */
export function fileErrorsOutput(description: string) {
  return {
    type: 'array',
    description,
    items: { type: 'object', additionalProperties: false, required: ['file', 'message'], properties: { file: { type: 'string' }, message: { type: 'string' } } },
  } as const satisfies ToolOutputProperty;
}
