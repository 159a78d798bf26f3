import { AppException } from './errors';
import { checkJsonText, unstorableProblem } from './json-limits';

const refusal = (text: string, depth?: number) => {
  try {
    checkJsonText(text, depth);
  } catch (error) {
    return (error as AppException).body;
  }
  return null;
};

describe('checkJsonText', () => {
  it('counts nesting through objects and arrays, not brackets inside strings', () => {
    expect(refusal('{"a":[{"b":[1]}]}', 4)).toBeNull();
    expect(refusal('{"a":[{"b":[[1]]}]}', 4)?.details).toEqual({ parameter: 'a[0].b[0]', expected: 'at most 4 levels of nested objects and arrays' });
    expect(refusal('{"a":"[[[[[[[[[[[[[[["}', 2)).toBeNull();
    expect(refusal('{"x":1,"y":[0,[1,[2]]]}', 2)?.details?.parameter).toBe('y[1]');
  });

  it('names members by their decoded names, escaped quotes and \\u escapes included', () => {
    expect(refusal('{"a\\"b":{"\\u0041":[[1]]}}', 3)?.details?.parameter).toBe('a"b.A[0]');
    expect(refusal('{"ok":1,"then":{"x":[1]}}', 2)?.details?.parameter).toBe('then.x');
  });

  it('refuses NUL and unpaired surrogates, escaped or raw, and accepts pairs and escaped backslashes', () => {
    expect(refusal('{"c":"a\\u0000"}')?.details?.parameter).toBe('c');
    expect(refusal('{"c":"\\uD800"}')?.message).toContain('unpaired');
    expect(refusal('{"c":"\\uDC00"}')?.message).toContain('unpaired');
    expect(refusal('{"c":"\\ud800\\n"}')?.message).toContain('unpaired');
    expect(refusal('["\\ud800x"]')?.details?.parameter).toBe('[0]');
    expect(refusal('{"c":"\\ud83d\\ude00 \\\\u0000"}')).toBeNull();
    expect(refusal('{"c":"a\u0000"}')?.message).toContain('NUL');
    expect(refusal('{"c":"\\ud83d\ude00"}')).toBeNull(); // escaped high, raw low: a pair
  });

  it('handles any depth without recursion', () => {
    expect(refusal('['.repeat(200_000) + ']'.repeat(200_000))?.code).toBe('INVALID_REQUEST');
  });
});

describe('unstorableProblem', () => {
  it('finds deep values, NUL and unpaired surrogates, in keys too', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(unstorableProblem(deep, 128)).toContain('deeper than 128');
    expect(unstorableProblem({ a: ['x\u0000'] }, 128)).toContain('NUL');
    expect(unstorableProblem({ ['\ud800']: 1 }, 128)).toContain('surrogate');
    expect(unstorableProblem({ a: [{ b: 'fine 😀' }] }, 128)).toBeNull();
  });
});
