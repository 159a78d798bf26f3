/**
 * The inputs of a tool that reads files (`workspace`, `ref`), and the choice between inline text
 * and a workspace file: declared the same way by every such tool, and read by the service
 * (src/workspaces opens the workspace and ref they name as the call's ctx.workspace).
 */
import type { ToolInputProperty } from './definition';

/** An uploaded workspace's id: `ws_` + 20 base62 characters. */
export const WORKSPACE_ID_PATTERN = /^ws_[0-9A-Za-z]{20}$/;

/**
 * The optional `workspace` input of a tool that reads files: an uploaded workspace of the
 * caller's account (POST /v1/workspaces). The service opens it as the tool's ctx.workspace, so
 * `path` and `files` are relative to it; without it they are relative to WORKSPACE_ROOT.
 */
function workspaceInput() {
  return {
    type: 'string',
    pattern: WORKSPACE_ID_PATTERN.source,
    maxLength: 23,
    description: "An uploaded workspace of your account (ws_…, from POST /v1/workspaces): path and files are read inside it. Without it, the service's shared workspace.",
  } as const satisfies ToolInputProperty;
}

/**
 * The optional `ref` input of a tool that reads files: a branch, tag or commit of the git
 * repository at the workspace's root. The service opens the files as they are at that commit
 * (never touching the work tree) as the tool's ctx.workspace. Only a tool that also takes
 * `workspace` (see workspaceInputs) gets this meaning for `ref`.
 */
export function refInput() {
  return {
    type: 'string',
    minLength: 1,
    maxLength: 255,
    // git's ref syntax plus revision suffixes (HEAD~1, v1.2^{commit}); no leading '-' or spaces.
    pattern: '^[A-Za-z0-9_./@{}^~][A-Za-z0-9_./@{}^~+-]*$',
    description: 'A branch, tag or commit (HEAD~1 works) of the git repository at the root of the workspace: files are read as they are at that commit.',
  } as const satisfies ToolInputProperty;
}

/**
 * The `path` input of a tool that reads files: a file or a directory of the workspace (or of the
 * uploaded workspace `workspace` names), its root when omitted.
 */
export function workspacePathInput<const Description extends string>(description: Description) {
  return { type: 'string', maxLength: 1024, default: '.', description } as const satisfies ToolInputProperty;
}

/** `workspace` and `ref` together: what every tool that reads the workspace declares. */
export function workspaceInputs() {
  return { workspace: workspaceInput(), ref: refInput() };
}

/** Where a tool's text comes from: inline `content` or a workspace file `path`. */
export type TextSource = { kind: 'content'; content: string } | { kind: 'path'; path: string };

/**
 * For tools that take text either inline (`content`) or from the workspace (`path`); their
 * input's `exactlyOneOf('content', 'path')` has refused a call with neither or both.
 */
export function textSource(input: { content?: string; path?: string }): TextSource {
  return input.content !== undefined ? { kind: 'content', content: input.content } : { kind: 'path', path: input.path! };
}
