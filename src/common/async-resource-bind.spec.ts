import { AsyncLocalStorage, AsyncResource, createHook } from 'node:async_hooks';
import { installAsyncResourceBind } from './async-resource-bind';

describe('installAsyncResourceBind', () => {
  const store = new AsyncLocalStorage<string>();

  beforeAll(() => {
    installAsyncResourceBind();
  });

  it('is installed once: bound functions no longer carry the deprecated asyncResource accessor', () => {
    expect('asyncResource' in AsyncResource.bind(() => undefined)).toBe(false);
    expect('asyncResource' in new AsyncResource('t').bind(() => undefined)).toBe(false);
    expect(installAsyncResourceBind()).toBe(false);
  });

  it('runs the function in the context it was bound in, not the one it is called from', () => {
    const bound = store.run('at bind', () => AsyncResource.bind(() => store.getStore()));
    const boundToInstance = store.run('at bind', () => new AsyncResource('t').bind(() => store.getStore()));
    expect(store.run('at call', bound)).toBe('at bind');
    expect(store.run('at call', boundToInstance)).toBe('at bind');
  });

  it('passes arguments, the call’s this or the given thisArg, and the return value; keeps length', () => {
    const receiver = { name: 'receiver' };
    function describeCall(this: unknown, a: number, b: number) {
      return { self: this, sum: a + b };
    }
    const bound = AsyncResource.bind(describeCall);
    expect(bound.length).toBe(2);
    expect(bound.call(receiver, 1, 2)).toEqual({ self: receiver, sum: 3 });
    const withThis = AsyncResource.bind(describeCall, 'typed', receiver);
    expect(withThis.call({ other: true }, 2, 3)).toEqual({ self: receiver, sum: 5 });
    expect(() => AsyncResource.bind(42 as never)).toThrow(/"fn" argument must be of type function/);
  });

  it('creates one AsyncResource per bind, of the given type or the function’s name', () => {
    const types: string[] = [];
    const hook = createHook({ init: (_id, type) => types.push(type) }).enable();
    try {
      AsyncResource.bind(function named() {});
      AsyncResource.bind(() => undefined, 'given-type');
    } finally {
      hook.disable();
    }
    expect(types).toEqual(['named', 'given-type']);
  });
});
