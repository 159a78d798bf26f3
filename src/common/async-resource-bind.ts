import { AsyncResource } from 'node:async_hooks';

// Taken once: the installed bind outlives the module instance that installed it (in Jest, a test
// file's context, whose globals are removed after it ends), so it reads no global at call time.
const { defineProperty } = Object;
const ArgumentTypeError = TypeError;

/**
 * `AsyncResource.bind` without the deprecated `asyncResource` accessor on the bound function.
 *
 * On Node 20 every bind builds that accessor with two `util.deprecate` wrappers, each a
 * `setPrototypeOf` on a fresh function; Nest binds once per interceptor per request and Fastify
 * once per request body, and by paired measurement that alone was about half the server CPU of a
 * cache-hit invoke (docs/ARCHITECTURE.md#asyncresourcebind-on-node-20). The replacement keeps what
 * callers rely on: a new AsyncResource per bind (so AsyncLocalStorage stores and async_hooks see the
 * same resources), the call's `this` or the given `thisArg`, the return value, and `length`.
 *
 * Installed once per process; a Node whose bound functions no longer carry the accessor is left alone.
 */
export function installAsyncResourceBind(): boolean {
  if (!('asyncResource' in AsyncResource.bind(() => undefined))) return false;
  AsyncResource.prototype.bind = function bind<Func extends (...args: never[]) => unknown>(this: AsyncResource, fn: Func, thisArg?: ThisParameterType<Func>) {
    return bindToResource(this, fn, thisArg);
  };
  AsyncResource.bind = function bind<Func extends (...args: never[]) => unknown>(fn: Func, type?: string, thisArg?: ThisParameterType<Func>) {
    return bindToResource(new AsyncResource(type || fn.name || 'bound-anonymous-fn'), fn, thisArg);
  };
  return true;
}

function bindToResource<Func>(resource: AsyncResource, fn: Func, thisArg: unknown): Func {
  if (typeof fn !== 'function') throw new ArgumentTypeError(`The "fn" argument must be of type function. Received ${typeof fn}`);
  const call = fn as (...args: unknown[]) => unknown;
  const bound =
    thisArg === undefined
      ? function (this: unknown, ...args: unknown[]) {
          return resource.runInAsyncScope(call, this, ...args);
        }
      : resource.runInAsyncScope.bind(resource, call, thisArg);
  defineProperty(bound, 'length', { configurable: true, enumerable: false, value: call.length, writable: false });
  return bound as Func;
}
