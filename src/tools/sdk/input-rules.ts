import type { InputRules } from './definition';

/**
 * Rules between inputs that a tool declares in its input schema, so that a call breaking them is
 * refused before an execution exists (a clear INVALID_REQUEST or INVALID_INPUT naming the inputs),
 * like any other invalid input. They are written with `if`/`then`/`else` and `not` only: several
 * model APIs refuse a tool whose published input schema has `oneOf`, `anyOf` or `allOf` at its top.
 */

/** Exactly one of the two inputs must be given (e.g. inline `content` or a workspace `path`). */
export function exactlyOneOf<const A extends string, const B extends string>(first: A, second: B) {
  return { if: { required: [first] }, then: { not: { required: [second] } }, else: { required: [second] } } as const satisfies InputRules;
}

/** At most one of the two inputs may be given. */
export function notBoth<const A extends string, const B extends string>(first: A, second: B) {
  return { not: { required: [first, second] } } as const satisfies InputRules;
}

/** The two inputs of an exactlyOneOf rule, or null when the rules are not one. */
export function exactlyOneOfNames(rules: InputRules): [string, string] | null {
  const [first] = requiredOf(rules.if);
  const [second] = requiredOf(rules.else);
  if (!first || !second) return null;
  const expected = exactlyOneOf(first, second);
  return JSON.stringify([rules.if, rules.then, rules.else]) === JSON.stringify([expected.if, expected.then, expected.else]) ? [first, second] : null;
}

/** The two inputs of a notBoth rule, or null. */
export function notBothNames(rules: InputRules): [string, string] | null {
  const names = requiredOf(rules.not);
  return names.length === 2 && JSON.stringify(rules.not) === JSON.stringify(notBoth(names[0], names[1]).not) ? [names[0], names[1]] : null;
}

function requiredOf(schema: { readonly [keyword: string]: unknown } | undefined): string[] {
  return Array.isArray(schema?.required) ? schema.required.map(String) : [];
}
