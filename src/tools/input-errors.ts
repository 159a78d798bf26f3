import type { ErrorObject } from 'ajv';
import { AppException } from '../common/errors';
import { maskApiKeys } from '../common/key-mask';
import { REDACTED, redactStoredInput, type InputRules, type ToolInputProperty } from './sdk';
import { exactlyOneOfNames, notBothNames } from './sdk/input-rules';

/** Turns the first ajv error into the error of docs/API.md#which-400: missing → INVALID_REQUEST, wrong → INVALID_INPUT. */
export function inputErrorToException(
  errors: ErrorObject[],
  input: Record<string, unknown>,
  definitions: Readonly<Record<string, ToolInputProperty>>,
  rules: InputRules = {},
): AppException {
  const broken = ruleBetweenInputs(errors, input, rules);
  if (broken) return broken;
  const missing = errors.find((e) => e.keyword === 'required' && e.schemaPath === '#/required');
  if (missing) {
    const parameter = String(missing.params.missingProperty);
    return AppException.invalidRequest(`Missing required parameter: ${parameter}`, {
      parameter,
      expected: describeExpected(definitions[parameter]),
    });
  }
  const error = errors[0];
  const parameter = parameterName(error);
  const shown = valueAt(redactStoredInput(definitions, input), error.instancePath);
  const received = shown === REDACTED ? '[redacted]' : preview(shown);
  const expected = expectedFromError(error);
  return new AppException('INVALID_INPUT', `Invalid value for parameter '${parameter}': expected ${expected}`, {
    details: { parameter, expected, received },
  });
}

/** A rule between inputs (exactlyOneOf, notBoth) in words: which inputs to give. */
function ruleBetweenInputs(errors: ErrorObject[], input: Record<string, unknown>, rules: InputRules): AppException | null {
  const quoted = (names: string[]) => names.map((name) => `'${name}'`);
  const one = exactlyOneOfNames(rules);
  if (one && errors.some((e) => e.keyword === 'if' && e.schemaPath === '#/if')) {
    const expected = `exactly one of ${quoted(one).join(' or ')}`;
    const given = one.filter((name) => input[name] !== undefined);
    if (given.length === 0) return AppException.invalidRequest(`Missing required parameter: give ${expected}`, { parameter: one[0], expected });
    return new AppException('INVALID_INPUT', `Invalid parameters ${quoted(given).join(' and ')}: give ${expected}`, { details: { parameter: one[1], expected } });
  }
  const pair = notBothNames(rules);
  if (pair && errors.some((e) => e.schemaPath === '#/not')) {
    const expected = `at most one of ${quoted(pair).join(' or ')}`;
    return new AppException('INVALID_INPUT', `Invalid parameters ${quoted(pair).join(' and ')}: give ${expected}`, { details: { parameter: pair[1], expected } });
  }
  return null;
}

function parameterName(error: ErrorObject): string {
  const segments = pointerSegments(error.instancePath);
  if (error.keyword === 'required') segments.push(String(error.params.missingProperty));
  return segments.reduce((path, segment) => (/^\d+$/.test(segment) ? `${path}[${segment}]` : path ? `${path}.${segment}` : segment), '');
}

function expectedFromError(error: ErrorObject): string {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'type': return String(p.type);
    case 'enum': return `one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'maxLength': return `at most ${p.limit} characters`;
    case 'minLength': return `at least ${p.limit} characters`;
    case 'maximum': return `a number <= ${p.limit}`;
    case 'minimum': return `a number >= ${p.limit}`;
    case 'exclusiveMaximum': return `a number < ${p.limit}`;
    case 'exclusiveMinimum': return `a number > ${p.limit}`;
    case 'maxItems': return `at most ${p.limit} items`;
    case 'minItems': return `at least ${p.limit} items`;
    case 'maxProperties': return `at most ${p.limit} members`;
    case 'pattern': return `a string matching ${p.pattern}`;
    case 'format': return `a valid ${p.format}`;
    case 'required': return 'a present value';
    case 'additionalProperties': return `no member '${p.additionalProperty}'`;
    default: return error.message ?? 'a valid value';
  }
}

function describeExpected(definition: ToolInputProperty | undefined): string {
  if (!definition) return 'a value';
  if (definition.enum) return `one of ${definition.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  return definition.type ?? 'any';
}

function valueAt(root: unknown, pointer: string): unknown {
  return pointerSegments(pointer).reduce<unknown>(
    (value, segment) => (value && typeof value === 'object' ? (value as Record<string, unknown>)[segment] : undefined),
    root,
  );
}

/** RFC 6901 JSON Pointer to its unescaped segments. */
function pointerSegments(pointer: string): string[] {
  return pointer.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Echo back enough of the value to be useful, never a megabyte. */
function preview(value: unknown): unknown {
  if (typeof value === 'string') return maskApiKeys(value.length > 100 ? `${value.slice(0, 100)}…` : value);
  if (value === null || typeof value !== 'object') return value;
  return Array.isArray(value) ? `array(${value.length})` : 'object';
}
