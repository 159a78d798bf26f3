import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import jsonata from 'jsonata';
import type { ToolCatalogue } from '../tools/tool-catalogue';
import { expressionOf, type DocumentProblem, type WorkflowDocument, type WorkflowStep } from './workflow-document';

/** Literal inputs are checked against the tool's own input schema, member by member. */
const literals = addFormats(new Ajv2020({ strict: false, allErrors: false, allowUnionTypes: true }));

const STEP_REFERENCE = /\bsteps\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)/g;

/** The step ids an expression reads (`steps.<id>…`). */
export function referencedSteps(expression: string): string[] {
  return [...new Set([...expression.matchAll(STEP_REFERENCE)].map((match) => match[1]))];
}

/**
 * What the catalogue and JSONata can tell of a well-shaped document: unknown tools, needs that
 * name no step, cycles, expressions that do not parse, references to steps that are not upstream,
 * literal inputs the tool would refuse. Every problem names the step and the field at fault.
 */
/** The tools a document's steps may name: the registry's, and those the account added at run time. */
export type StepTools = Pick<ToolCatalogue, 'has' | 'get'>;

export function checkDocument(document: WorkflowDocument, catalogue: StepTools): DocumentProblem[] {
  const problems: DocumentProblem[] = [];
  const byId = new Map(document.steps.map((step) => [step.id, step]));
  document.steps.forEach((step, index) => {
    const at = (member: string, message: string) => problems.push({ path: `steps[${index}].${member}`, step: step.id, message });
    step.needs.forEach((need, n) => {
      if (!byId.has(need)) at(`needs[${n}]`, `'${need}' is not a step of this workflow`);
      if (need === step.id) at(`needs[${n}]`, 'a step cannot need itself');
    });
    if (!catalogue.has(step.tool)) at('tool', `unknown tool '${step.tool}'`);
  });
  const cycle = findCycle(document.steps);
  if (cycle) problems.push({ path: `steps[${document.steps.findIndex((step) => step.id === cycle[0])}].needs`, step: cycle[0], message: `the needs form a cycle: ${cycle.join(' → ')}` });
  if (problems.length > 0) return problems;

  const upstream = upstreamOf(document.steps);
  document.steps.forEach((step, index) => {
    const at = (member: string, message: string) => problems.push({ path: `steps[${index}].${member}`, step: step.id, message });
    const checkExpression = (member: string, text: string) => {
      const failure = parseFailure(text);
      if (failure) return at(member, `the expression does not parse: ${failure}`);
      for (const referenced of referencedSteps(text)) {
        if (!byId.has(referenced)) at(member, `reads steps.${referenced}, which is not a step of this workflow`);
        else if (!upstream.get(step.id)!.has(referenced)) at(member, `reads steps.${referenced}, which is not upstream of '${step.id}' (add it to needs)`);
      }
    };
    if (step.if !== undefined) checkExpression('if', step.if);
    if (step.for_each !== undefined) checkExpression('for_each', step.for_each);
    const tool = catalogue.get(step.tool);
    const properties = (tool.inputSchema.properties ?? {}) as Record<string, Record<string, unknown>>;
    for (const [name, value] of Object.entries(step.inputs)) {
      const member = `inputs.${name}`;
      if (!Object.hasOwn(properties, name)) {
        at(member, `tool '${step.tool}' has no input '${name}' (it takes ${Object.keys(properties).join(', ') || 'none'})`);
        continue;
      }
      const expression = expressionOf(value);
      if (expression !== undefined) checkExpression(member, expression);
      else if (!containsExpression(value)) {
        const validate = literals.compile(properties[name]);
        if (!validate(value)) at(member, `the literal does not fit tool '${step.tool}': ${literals.errorsText(validate.errors, { dataVar: name })}`);
      } else checkNestedExpressions(value, member, checkExpression);
    }
    for (const required of (tool.inputSchema.required ?? []) as string[]) {
      if (!Object.hasOwn(step.inputs, required)) at('inputs', `tool '${step.tool}' requires input '${required}'`);
    }
  });
  for (const [name, value] of Object.entries(document.outputs)) {
    checkNestedExpressions(value, `outputs.${name}`, (path, text) => {
      const failure = parseFailure(text);
      if (failure) return problems.push({ path, message: `the expression does not parse: ${failure}` });
      for (const referenced of referencedSteps(text)) if (!byId.has(referenced)) problems.push({ path, message: `reads steps.${referenced}, which is not a step of this workflow` });
    });
  }
  return problems;
}

/** Literal objects and lists may hold expressions in their members: `{ title: "${{ inputs.repo }}" }`. */
function containsExpression(value: unknown): boolean {
  if (expressionOf(value) !== undefined) return true;
  if (Array.isArray(value)) return value.some(containsExpression);
  if (value && typeof value === 'object') return Object.values(value).some(containsExpression);
  return false;
}

function checkNestedExpressions(value: unknown, path: string, check: (path: string, text: string) => void): void {
  const expression = expressionOf(value);
  if (expression !== undefined) return check(path, expression);
  if (Array.isArray(value)) value.forEach((member, i) => checkNestedExpressions(member, `${path}[${i}]`, check));
  else if (value && typeof value === 'object') for (const [key, member] of Object.entries(value)) checkNestedExpressions(member, `${path}.${key}`, check);
}

function parseFailure(text: string): string | undefined {
  if (text.length === 0) return 'it is empty';
  try {
    jsonata(text);
    return undefined;
  } catch (error) {
    const failure = error as { message?: string; position?: number };
    return `${failure.message ?? String(error)}${failure.position === undefined ? '' : ` (at ${failure.position})`}`;
  }
}

/** A cycle through the needs, as the ids along it (first repeated at the end), or undefined. */
export function findCycle(steps: readonly Pick<WorkflowStep, 'id' | 'needs'>[]): string[] | undefined {
  const needs = new Map(steps.map((step) => [step.id, step.needs]));
  const state = new Map<string, 'visiting' | 'done'>();
  const path: string[] = [];
  const visit = (id: string): string[] | undefined => {
    if (state.get(id) === 'done' || !needs.has(id)) return undefined;
    if (state.get(id) === 'visiting') return [...path.slice(path.indexOf(id)), id];
    state.set(id, 'visiting');
    path.push(id);
    for (const need of needs.get(id)!) {
      const cycle = visit(need);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(id, 'done');
    return undefined;
  };
  for (const { id } of steps) {
    const cycle = visit(id);
    if (cycle) return cycle;
  }
  return undefined;
}

/** Every step's transitive needs (an acyclic document). */
export function upstreamOf(steps: readonly Pick<WorkflowStep, 'id' | 'needs'>[]): Map<string, Set<string>> {
  const needs = new Map(steps.map((step) => [step.id, step.needs]));
  const upstream = new Map<string, Set<string>>();
  const of = (id: string): Set<string> => {
    const known = upstream.get(id);
    if (known) return known;
    const all = new Set<string>();
    for (const need of needs.get(id) ?? []) {
      all.add(need);
      for (const further of of(need)) all.add(further);
    }
    upstream.set(id, all);
    return all;
  };
  for (const { id } of steps) of(id);
  return upstream;
}
