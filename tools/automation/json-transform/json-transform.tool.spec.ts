import { runTool, toolFailure } from '@tos/sdk/testing';
import { JsonTransformTool } from './json-transform.tool';

const tool = new JsonTransformTool();
const run = (input: { expression: string; data: unknown; bindings?: Record<string, unknown> }, signal?: AbortSignal, config?: Record<string, string>) =>
  runTool<{ result: unknown }>(tool, input, { signal, config });

const people = {
  people: [
    { name: 'Ada', age: 36, city: 'London' },
    { name: 'Linus', age: 28, city: 'Helsinki' },
    { name: 'Grace', age: 45, city: 'London' },
  ],
};

describe('JsonTransformTool', () => {
  it('maps, filters and aggregates', async () => {
    await expect(run({ expression: 'people.name', data: people })).resolves.toEqual({ result: ['Ada', 'Linus', 'Grace'] });
    await expect(run({ expression: 'people[city = "London"].{ "who": name, "born": 2024 - age }', data: people })).resolves.toEqual({
      result: [
        { who: 'Ada', born: 1988 },
        { who: 'Grace', born: 1979 },
      ],
    });
    await expect(run({ expression: '$sum(people.age) / $count(people)', data: people })).resolves.toEqual({ result: 109 / 3 });
    await expect(run({ expression: 'people{ city: $count(name) }', data: people })).resolves.toEqual({
      result: { London: 2, Helsinki: 1 },
    });
  });

  it('returns plain JSON arrays, without jsonata sequence flags', async () => {
    const { result } = await run({ expression: 'people[age > 30].name', data: people });
    expect(Object.keys(result as object)).toEqual(['0', '1']);
  });

  it('exposes bindings as $variables', async () => {
    await expect(
      run({ expression: 'people[age >= $min and city = $where].name', data: people, bindings: { min: 40, where: 'London' } }),
    ).resolves.toEqual({ result: 'Grace' });
  });

  it('returns null when nothing matches, and for non-JSON results such as functions', async () => {
    await expect(run({ expression: 'people[age > 100]', data: people })).resolves.toEqual({ result: null });
    await expect(run({ expression: 'nothing.here', data: {} })).resolves.toEqual({ result: null });
    await expect(run({ expression: 'function($x) { $x }', data: {} })).resolves.toEqual({ result: null });
    await expect(run({ expression: '{ "f": $uppercase, "g": function() { 1 }, "n": 1 }', data: {} })).resolves.toEqual({
      result: { n: 1 },
    });
  });

  it('reports a syntax error as INVALID_INPUT with jsonata message and position', async () => {
    const error = await toolFailure(run({ expression: 'people[age > ]', data: people }));
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.details).toEqual({ parameter: 'expression', expected: 'a valid JSONata expression' });
    expect(error.message).toMatch(/^Invalid JSONata expression: .+ \(S0\d{3} at position \d+\)$/);
  });

  it('reports a runtime evaluation error as INVALID_INPUT', async () => {
    const error = await toolFailure(run({ expression: '"a" + 1', data: {} }));
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.details?.parameter).toBe('expression');
    expect(error.message).toMatch(/JSONata evaluation failed: .*\(T2001 at position \d+\)/);
  });

  it('stops non-terminating recursion at the depth bound', async () => {
    const started = Date.now();
    const error = await toolFailure(run({ expression: '($f := function($n) { 1 + $f($n + 1) }; $f(0))', data: {} }));
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toMatch(/nesting deeper than 1000 evaluation steps/);
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('allows legitimately deep recursion below the bound', async () => {
    const factorialOf = '($f := function($n) { $n <= 1 ? 1 : $n * $f($n - 1) }; $f(100) > 1e157)';
    await expect(run({ expression: factorialOf, data: {} })).resolves.toEqual({ result: true });
  });

  it('stops an endless loop at the 5 s time bound', async () => {
    const started = Date.now();
    // Tail recursion does not grow the depth: only the clock stops it.
    const error = await toolFailure(run({ expression: '($loop := function($n) { $loop($n + 1) }; $loop(0))', data: {} }));
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toMatch(/ran longer than 5 s/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(5000);
  }, 15_000);

  it('stops a catastrophic regular expression at the time bound, whichever function runs it', async () => {
    // `(a+)+$` on 28 a's and a '!' backtracks for seconds in one match (interpreted or compiled), past the 1 s bound.
    const subject = `"${'a'.repeat(28)}!"`;
    const quick = { JSON_TRANSFORM_TIME_LIMIT_SECONDS: '1' };
    for (const call of [`$match(${subject}, /(a+)+$/)`, `$replace(${subject}, /(a+)+$/, "b")`, `$contains(${subject}, /(a+)+$/)`, `$eval('$split(${subject}, /(a+)+$/)')`]) {
      const error = await toolFailure(run({ expression: call, data: {} }, undefined, quick));
      expect({ call, code: error.code, message: error.message }).toEqual({ call, code: 'INVALID_INPUT', message: expect.stringMatching(/regular expression in 'expression' took longer than \d+ ms/) });
    }
  }, 30_000);

  it('matches regular expressions as jsonata does, one match after another', async () => {
    await expect(run({ expression: '$match("a1b22c333", /[0-9]+/).match', data: {} })).resolves.toEqual({ result: ['1', '22', '333'] });
    await expect(run({ expression: '$replace("a1b22c333", /([a-z])([0-9]+)/, "$2$1")', data: {} })).resolves.toEqual({ result: '1a22b333c' });
    await expect(run({ expression: '$split("a, b;c", /[,;] ?/)', data: {} })).resolves.toEqual({ result: ['a', 'b', 'c'] });
  });

  it('stops when the signal aborts (cancel or timeout), without waiting for the time bound', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const running = run({ expression: '($loop := function($n) { $loop($n + 1) }; $loop(0))', data: {} }, controller.signal);
    setTimeout(() => controller.abort(), 100);
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('refuses a result over 1 MiB of JSON', async () => {
    const error = await toolFailure(run({ expression: '$pad("", 1100000, "x")', data: {} }));
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toMatch(/The result is 1100002 bytes as JSON, over the limit of 1048576 bytes/);
  });

  it('reuses compiled expressions without carrying variables, bindings or hooks from one evaluation to another', async () => {
    const expression = '$exists($seen) ? "carried over" : ($seen := true; $count(people) + ($min ? $min : 0))';
    await expect(run({ expression, data: people, bindings: { min: 10 } })).resolves.toEqual({ result: 13 });
    await expect(run({ expression, data: people })).resolves.toEqual({ result: 3 });

    const loop = '($loop := function($n) { $n < 2000 ? $loop($n + 1) : $n }; $loop(0))';
    const aborted = new AbortController();
    const first = run({ expression: loop, data: {} }, aborted.signal);
    const second = run({ expression: loop, data: {} });
    aborted.abort();
    await expect(first).rejects.toMatchObject({ name: 'AbortError' });
    await expect(second).resolves.toEqual({ result: 2000 });
    await expect(run({ expression: loop, data: {} })).resolves.toEqual({ result: 2000 });
  });

  it('evaluates one expression side by side on separate instances, more of them than are kept idle', async () => {
    // Each evaluation nests about 600 steps: two sharing an instance (and its depth guard) would pass
    // the limit of 1000. 40 at once is past the 32 kept idle. They interleave, so each one's clock
    // runs while all the others work: the time limit is raised for this test (it is not what it checks).
    const expression = '($loop := function($n) { $n < 200 ? 1 + $loop($n + 1) : $x }; $loop(0))';
    const roomy = { JSON_TRANSFORM_TIME_LIMIT_SECONDS: '120' };
    for (let round = 0; round < 2; round++) {
      const results = await Promise.all(Array.from({ length: 40 }, (_, x) => run({ expression, data: {}, bindings: { x } }, undefined, roomy)));
      expect(results).toEqual(Array.from({ length: 40 }, (_, x) => ({ result: 200 + x })));
    }
  });
});
