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
    // The depth bound's message, not the 5 s time bound's: it stopped on depth.
    const error = await toolFailure(run({ expression: '($f := function($n) { 1 + $f($n + 1) }; $f(0))', data: {} }));
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toMatch(/nesting deeper than 1000 evaluation steps/);
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

  it('answers a catastrophic regular expression at once and correctly, whichever function runs it (linear-time matching)', async () => {
    // `(a+)+$` on 40 a's and a '!' backtracks for hours in a backtracking engine; RE2 semantics answer in linear time.
    const subject = `"${'a'.repeat(40)}!"`;
    const calls: [string, unknown][] = [
      [`$match(${subject}, /(a+)+$/)`, null],
      [`$replace(${subject}, /(a+)+$/, "b")`, `${'a'.repeat(40)}!`],
      [`$contains(${subject}, /(a+)+$/)`, false],
      [`$eval('$split(${subject}, /(a+)+$/)')`, [`${'a'.repeat(40)}!`]],
      [`$match(${subject}, /(a+)+!$/).groups`, ['a'.repeat(40)]],
    ];
    for (const [call, result] of calls) {
      const started = Date.now();
      await expect(run({ expression: call, data: {} })).resolves.toEqual({ result });
      expect(Date.now() - started).toBeLessThan(1000);
    }
  });

  it('stops regular-expression work past its budget in one step, the event loop held no longer', async () => {
    // A 2,022-instruction program searched with groups over 256 KiB to the match at its end: about 10 s in one step.
    const expression = '$match($pad("", 262144, "a") & "x", /([ab]{1,100}){1,10}[xy]/)';
    const started = Date.now();
    const error = await toolFailure(run({ expression, data: {} }));
    expect({ code: error.code, message: error.message }).toEqual({ code: 'INVALID_INPUT', message: expect.stringMatching(/regular expression in 'expression' took longer than 250 ms/) });
    expect(Date.now() - started).toBeLessThan(2000);
    // The interrupted pattern is compiled again for the next call.
    await expect(run({ expression: '$match("abx", /([ab]{1,100}){1,10}[xy]/).groups', data: {} })).resolves.toEqual({ result: ['ab'] });
  });

  it('refuses a regular expression RE2 cannot match in linear time (backreference, lookahead) as INVALID_INPUT', async () => {
    for (const expression of ['$match("abab", /(ab)\\1/)', '$contains("ab", /a(?=b)/)']) {
      const error = await toolFailure(run({ expression, data: {} }));
      expect({ expression, code: error.code, message: error.message }).toEqual({ expression, code: 'INVALID_INPUT', message: expect.stringMatching(/^The regular expression \/.+\/ cannot be matched in linear time: /) });
    }
    // Lookbehinds without groups inside do run in linear time.
    await expect(run({ expression: '$match("xa ya", /(?<=y)a/).index', data: {} })).resolves.toEqual({ result: 4 });
  });

  it('stops a string past 2 Mi characters before a character function spreads it (V8 would end the process)', async () => {
    // Eight doublings of 1 MiB cost nothing (ropes); `$length` of 2^28 characters used to abort the process.
    const expression = '($s := $pad("", 1048576, "x"); $d := function($x, $n) { $n = 0 ? $x : $d($x & $x, $n - 1) }; $length($d($s, 8)))';
    const error = await toolFailure(run({ expression, data: {} }));
    expect([error.code, error.message]).toEqual(['INVALID_INPUT', 'JSONata evaluation stopped: it made a string of more than 2097152 characters']);
  });

  it('stops a sequence past 2^19 items before a built-in walks it in one call (the event loop held seconds)', async () => {
    const started = Date.now();
    const error = await toolFailure(run({ expression: '$string([1..10000000])', data: {} }));
    expect([error.code, error.message]).toEqual(['INVALID_INPUT', 'JSONata evaluation stopped: it made a sequence of more than 524288 items']);
    expect(Date.now() - started).toBeLessThan(1500);
    await expect(run({ expression: '$count([1..524288])', data: {} })).resolves.toEqual({ result: 524288 });
  });

  it('refuses a result far over the limit without serializing all of it', async () => {
    const started = Date.now();
    const error = await toolFailure(run({ expression: '[1..2000].{"key": $pad("", 5000, "x")}', data: {} }));
    expect([error.code, error.message]).toEqual(['INVALID_INPUT', expect.stringMatching(/^The result is more than 8388608 bytes as JSON, over the limit of 1048576 bytes/)]);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('gives the event loop a turn every few milliseconds while an expression runs', async () => {
    const lags: number[] = [];
    let last = Date.now();
    const ticker = setInterval(() => {
      lags.push(Date.now() - last);
      last = Date.now();
    }, 1);
    try {
      const error = await toolFailure(run({ expression: '($loop := function($n) { $loop($n + 1) }; $loop(0))', data: {} }, undefined, { JSON_TRANSFORM_TIME_LIMIT_SECONDS: '1' }));
      expect(error.message).toMatch(/ran longer than 1 s/);
    } finally {
      clearInterval(ticker);
    }
    expect(lags.length).toBeGreaterThan(20);
    expect(Math.max(...lags)).toBeLessThan(200);
  });

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
