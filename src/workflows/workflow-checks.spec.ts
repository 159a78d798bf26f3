import type { RegisteredTool, ToolCatalogue } from '../tools/tool-catalogue';
import { checkDocument, findCycle, referencedSteps, upstreamOf } from './workflow-checks';
import { documentSource, inputsSchema, readDocument, type WorkflowDocument } from './workflow-document';

const tool = (properties: Record<string, unknown>, required: string[] = []) => ({ inputSchema: { type: 'object', properties, required } }) as unknown as RegisteredTool;
const TOOLS: Record<string, RegisteredTool> = {
  transform: tool({ expression: { type: 'string' }, data: {} }, ['expression']),
  sleep: tool({ ms: { type: 'integer', minimum: 0 } }, ['ms']),
};
const catalogue = { has: (id: string) => id in TOOLS, get: (id: string) => TOOLS[id] } as unknown as ToolCatalogue;

const read = (raw: Record<string, unknown>): WorkflowDocument => {
  const { document, problems } = readDocument(raw);
  expect(problems).toEqual([]);
  return document!;
};
const check = (steps: unknown[], outputs: Record<string, unknown> = {}) => checkDocument(read({ name: 'w', steps, outputs }), catalogue);

describe('readDocument', () => {
  it('fills in defaults and names every shape problem by its path and step', () => {
    expect(read({ name: 'w', steps: [{ id: 'a', tool: 'sleep' }] })).toEqual({
      name: 'w',
      publish: false,
      concurrency: 4,
      timeout: 3600,
      inputs: {},
      steps: [{ id: 'a', tool: 'sleep', inputs: {}, needs: [], continue_on_error: false }],
      outputs: {},
    });
    const { problems } = readDocument({
      name: 'w',
      extra: 1,
      concurrency: 99,
      steps: [{ id: 'a b', tool: 'sleep', retry: { attempts: 0, on: ['nope'] }, timeout: 999, for_each: 3, max_items: 1000 }, { id: 'x', tool: 'sleep' }, { id: 'x', tool: 'sleep' }],
    });
    expect(problems.map((p) => [p.path, p.step ?? null])).toEqual([
      ['extra', null],
      ['concurrency', null],
      ['steps[0].id', 'a b'],
      ['steps[0].for_each', 'a b'],
      ['steps[0].max_items', 'a b'],
      ['steps[0].timeout', 'a b'],
      ['steps[0].retry.attempts', 'a b'],
      ['steps[0].retry.on', 'a b'],
      ['steps[2].id', 'x'],
    ]);
  });

  it('reads YAML text, a `document` string, or the object itself', async () => {
    await expect(documentSource('name: w\nsteps: []\n')).resolves.toEqual({ name: 'w', steps: [] });
    await expect(documentSource({ document: 'name: w' })).resolves.toEqual({ name: 'w' });
    await expect(documentSource({ name: 'w' })).resolves.toEqual({ name: 'w' });
    await expect(documentSource('name: [')).rejects.toThrow(/not valid YAML/);
    await expect(documentSource('- a list')).rejects.toThrow(/must be a mapping/);
  });

  it('publishes its inputs as a JSON schema (required unless defaulted)', () => {
    expect(inputsSchema(read({ name: 'w', inputs: { a: { type: 'integer', required: true }, b: { type: 'string', required: true, default: 'x' } }, steps: [{ id: 's', tool: 'sleep' }] }))).toEqual({
      type: 'object',
      properties: { a: { type: 'integer' }, b: { type: 'string', default: 'x' } },
      required: ['a'],
      additionalProperties: false,
    });
  });
});

describe('checkDocument', () => {
  it('accepts a sound document', () => {
    expect(check([{ id: 'a', tool: 'sleep', inputs: { ms: 1 } }, { id: 'b', tool: 'transform', needs: ['a'], inputs: { expression: '$', data: { slept: '${{ steps.a.result.slept_ms }}' } } }], { out: '${{ steps.b.result }}' })).toEqual([]);
  });

  it('names the unknown tool, the missing need and the cycle', () => {
    expect(check([{ id: 'a', tool: 'nope' }])).toEqual([{ path: 'steps[0].tool', step: 'a', message: "unknown tool 'nope'" }]);
    expect(check([{ id: 'a', tool: 'sleep', needs: ['z'], inputs: { ms: 1 } }])).toEqual([{ path: 'steps[0].needs[0]', step: 'a', message: "'z' is not a step of this workflow" }]);
    expect(check([{ id: 'a', tool: 'sleep', needs: ['b'], inputs: { ms: 1 } }, { id: 'b', tool: 'sleep', needs: ['a'], inputs: { ms: 1 } }])[0].message).toBe('the needs form a cycle: a → b → a');
  });

  it('names expressions that do not parse and references to steps not upstream', () => {
    const problems = check([
      { id: 'a', tool: 'transform', if: '(((', inputs: { expression: '$' } },
      { id: 'b', tool: 'transform', inputs: { expression: '$', data: '${{ steps.a.result }}' } },
    ], { o: '${{ steps.zz }}' });
    expect(problems).toEqual([
      expect.objectContaining({ path: 'steps[0].if', step: 'a', message: expect.stringMatching(/^the expression does not parse/) }),
      { path: 'steps[1].inputs.data', step: 'b', message: "reads steps.a, which is not upstream of 'b' (add it to needs)" },
      { path: 'outputs.o', message: 'reads steps.zz, which is not a step of this workflow' },
    ]);
  });

  it('checks literal inputs against the tool: type, unknown name, required', () => {
    expect(check([{ id: 'a', tool: 'sleep', inputs: { ms: -1 } }])).toEqual([expect.objectContaining({ path: 'steps[0].inputs.ms', message: expect.stringMatching(/does not fit tool 'sleep'.*>= 0/) })]);
    expect(check([{ id: 'a', tool: 'sleep', inputs: { ms: 1, nap: true } }])).toEqual([expect.objectContaining({ path: 'steps[0].inputs.nap', message: "tool 'sleep' has no input 'nap' (it takes ms)" })]);
    expect(check([{ id: 'a', tool: 'sleep', inputs: {} }])).toEqual([{ path: 'steps[0].inputs', step: 'a', message: "tool 'sleep' requires input 'ms'" }]);
    expect(check([{ id: 'a', tool: 'sleep', inputs: { ms: '${{ 1 + 1 }}' } }])).toEqual([]);
  });
});

describe('the DAG helpers', () => {
  it('finds cycles, transitive upstreams and step references', () => {
    expect(findCycle([{ id: 'a', needs: [] }, { id: 'b', needs: ['a'] }])).toBeUndefined();
    expect(findCycle([{ id: 'a', needs: ['c'] }, { id: 'b', needs: ['a'] }, { id: 'c', needs: ['b'] }])).toEqual(['a', 'c', 'b', 'a']);
    expect([...upstreamOf([{ id: 'a', needs: [] }, { id: 'b', needs: ['a'] }, { id: 'c', needs: ['b'] }]).get('c')!].sort()).toEqual(['a', 'b']);
    expect(referencedSteps('steps.a.result + steps . b.x + $count(steps.a)')).toEqual(['a', 'b']);
  });
});
