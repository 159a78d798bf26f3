import { randomInt } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniformly random base62 string from the CSPRNG (no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)];
  return out;
}

/** Milliseconds since the epoch in 8 base62 digits: lexical order = time order until year 8888. */
function timePrefix(now: number): string {
  let out = '';
  let rest = now;
  for (let i = 0; i < 8; i++) {
    out = BASE62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

/** `exec_` + 24 base62 chars, sortable by creation time (docs/API.md#identifiers-and-time). */
export function newExecutionId(now = Date.now()): string {
  return `exec_${timePrefix(now)}${randomBase62(16)}`;
}

export function newKeyId(): string {
  return `key_${randomBase62(20)}`;
}

export function newAccountId(): string {
  return `acc_${randomBase62(20)}`;
}

export const EXECUTION_ID_PATTERN = /^exec_[0-9A-Za-z]{24}$/;

/** `wf_` + 24 base62 chars, sortable by creation time like execution ids. */
export function newWorkflowId(now = Date.now()): string {
  return `wf_${timePrefix(now)}${randomBase62(16)}`;
}

export const WORKFLOW_ID_PATTERN = /^wf_[0-9A-Za-z]{24}$/;
