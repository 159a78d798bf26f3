import type { ToolInputProperty } from './definition';

/** What a credential reads as wherever a call's input is kept or shown again. */
export const REDACTED = '[REDACTED]';

/**
 * Request headers whose value is a credential, by name or by a hyphen-separated word of their
 * name: Authorization, Proxy-Authorization, Cookie, Set-Cookie, X-Api-Key, X-Auth-Token,
 * Private-Token, X-Functions-Key, Ocp-Apim-Subscription-Key, X-Hub-Signature, X-Session-Id, …
 */
const CREDENTIAL_HEADER_WORD = /(^|-)(authorization|auth|cookie|token|secret|password|passwd|key|apikey|session|signature|credentials?)(-|$)/i;

export function isCredentialHeader(name: string): boolean {
  return CREDENTIAL_HEADER_WORD.test(name);
}

/**
 * The input as it may be stored (the execution row, a queued job held in clear) and echoed (REST,
 * MCP, the console, validation errors): `writeOnly` inputs and the values of credential headers in
 * `x-request-headers` inputs replaced by REDACTED. The one rule for every place a call's input is kept;
 * the tool itself gets the real values.
 */
export function redactStoredInput(inputs: Readonly<Record<string, ToolInputProperty>>, input: Record<string, unknown>): Record<string, unknown> {
  const names = credentialInputNames(inputs, input);
  if (names.length === 0) return input;
  return { ...input, ...Object.fromEntries(names.map((name) => [name, redactedValue(inputs[name], input[name])])) };
}

/** The inputs of this call that `redactStoredInput` changes: what a stored copy of it lacks. */
export function credentialInputNames(inputs: Readonly<Record<string, ToolInputProperty>>, input: Record<string, unknown>): string[] {
  return Object.keys(input).filter((name) => {
    const definition = inputs[name];
    if (!definition || input[name] === undefined) return false;
    if (definition.writeOnly) return true;
    return definition['x-request-headers'] === true && redactedValue(definition, input[name]) !== input[name];
  });
}

function redactedValue(definition: ToolInputProperty, value: unknown): unknown {
  if (definition.writeOnly) return REDACTED;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return REDACTED; // not a header map: nothing to tell apart
  const entries = Object.entries(value);
  if (!entries.some(([name]) => isCredentialHeader(name))) return value;
  return Object.fromEntries(entries.map(([name, v]) => [name, isCredentialHeader(name) ? REDACTED : v]));
}
