import { AppException } from '../../common/errors';
import type { InvokeOptions } from '../engine/execution-runner';
import type { CallerAnswers } from './invocation.service';

export const MAX_TIMEOUT_SECONDS = 300;


export interface InvokeRequest {
  input: Record<string, unknown>;
  options: InvokeOptions;
  /** A sync call's answers to the questions its tool asked in the last round (envelope form only). */
  answering: CallerAnswers;
}

/** A round's state is a few hundred bytes plus the answers; this bounds what a caller may send back. */
const MAX_REQUEST_STATE_CHARS = 65_536;

export interface InvokeQuery {
  async?: string;
  timeout?: string;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * docs/API.md#request-bodies: the body is the envelope when its `inputs` member is an object, else flat
 * (every member an input). Envelope `options` win over query parameters.
 */
export function parseInvokeRequest(toolId: string, body: unknown, query: InvokeQuery, cacheControl?: string): InvokeRequest {
  const payload = body ?? {};
  if (!isObject(payload)) throw AppException.invalidRequest('Request body must be a JSON object', { parameter: 'body', expected: 'object' });

  const fromQuery: Partial<InvokeOptions> = {
    async: query.async === undefined ? undefined : parseBooleanParam('async', query.async),
    timeout: query.timeout === undefined ? undefined : parseTimeout(query.timeout, 'timeout'),
  };
  const noCacheHeader = asksNoCache(cacheControl);

  if (!isObject(payload.inputs)) {
    return { input: payload, options: resolveOptions(fromQuery, {}, noCacheHeader), answering: {} };
  }
  if (payload.tool_id !== undefined && payload.tool_id !== toolId) {
    throw AppException.invalidRequest(`Body tool_id '${String(payload.tool_id)}' does not match the path tool '${toolId}'`, { parameter: 'tool_id', expected: toolId });
  }
  if (payload.options !== undefined && !isObject(payload.options)) {
    throw AppException.invalidRequest('options must be an object', { parameter: 'options', expected: 'object' });
  }
  const options = (payload.options ?? {}) as Record<string, unknown>;
  const fromBody: Partial<InvokeOptions> = {
    async: options.async === undefined ? undefined : requireBoolean('options.async', options.async),
    cache: options.cache === undefined ? undefined : requireBoolean('options.cache', options.cache),
    timeout: options.timeout === undefined ? undefined : parseTimeout(options.timeout, 'options.timeout'),
  };
  return { input: payload.inputs, options: resolveOptions(fromQuery, fromBody, noCacheHeader), answering: answeringOf(payload) };
}

/** `input_responses` (by question key) and `request_state`, as the last round's `input_required` answer asked. */
function answeringOf({ input_responses: responses, request_state: state }: Record<string, unknown>): CallerAnswers {
  if (responses !== undefined && !isObject(responses)) throw AppException.invalidRequest('input_responses must be an object of answers by question key', { parameter: 'input_responses', expected: 'object' });
  if (state !== undefined && (typeof state !== 'string' || state.length > MAX_REQUEST_STATE_CHARS)) {
    throw AppException.invalidRequest(`request_state must be the string the last answer gave (at most ${MAX_REQUEST_STATE_CHARS} characters)`, { parameter: 'request_state', expected: 'string' });
  }
  return { ...(responses && { responses }), ...(state !== undefined && { state: state as string }) };
}

/** `Cache-Control: no-cache` on an invocation bypasses the result cache (docs/API.md#caching), on REST and MCP alike. */
export function asksNoCache(cacheControl: string | undefined): boolean {
  return /(^|,)\s*no-cache\s*(,|$)/i.test(cacheControl ?? '');
}

function resolveOptions(fromQuery: Partial<InvokeOptions>, fromBody: Partial<InvokeOptions>, noCacheHeader: boolean): InvokeOptions {
  return {
    async: fromBody.async ?? fromQuery.async ?? false,
    timeout: fromBody.timeout ?? fromQuery.timeout,
    cache: !noCacheHeader && (fromBody.cache ?? true),
  };
}

function parseBooleanParam(parameter: string, value: string): boolean {
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw AppException.invalidRequest(`Invalid ${parameter}: expected true or false`, { parameter, expected: 'boolean', received: value });
}

function requireBoolean(parameter: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw AppException.invalidRequest(`Invalid ${parameter}: expected a boolean`, { parameter, expected: 'boolean', received: value });
  return value;
}

function parseTimeout(value: unknown, parameter: string): number {
  const seconds = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < 1) {
    throw AppException.invalidRequest(`Invalid ${parameter}: expected whole seconds between 1 and ${MAX_TIMEOUT_SECONDS}`, { parameter, expected: `integer 1..${MAX_TIMEOUT_SECONDS}`, received: value });
  }
  if (seconds > MAX_TIMEOUT_SECONDS) {
    throw AppException.invalidRequest(`${parameter} must be at most ${MAX_TIMEOUT_SECONDS} seconds`, { parameter, expected: `integer 1..${MAX_TIMEOUT_SECONDS}`, received: value });
  }
  return seconds;
}
