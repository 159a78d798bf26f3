import * as vm from 'node:vm';

/** `Object` of Node's main context: where importEsm (src/tools/sdk/import-esm.ts) loads oidc-provider. */
const MainObject = new vm.Script('Object').runInThisContext() as ObjectConstructor;

/**
 * The configuration again, its plain objects made by the main context's `Object`: oidc-provider merges
 * only objects whose constructor is its own realm's `Object`, and under Jest's sandbox ours are not.
 * In the built service both are the same and this is a copy.
 */
export function inMainRealm<T>(value: T): T {
  if (Array.isArray(value)) return value.map(inMainRealm) as T;
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return value;
  const copy = new MainObject() as Record<string, unknown>;
  for (const [key, member] of Object.entries(value)) copy[key] = inMainRealm(member);
  return copy as T;
}
