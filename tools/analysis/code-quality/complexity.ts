/**
 * Per-function cyclomatic and cognitive complexity, and per-file size and Halstead volume, of
 * JavaScript and TypeScript, on typescript-estree's syntax tree (the parser typescript-eslint uses).
 *
 * Cyclomatic: 1 + each branch point, counted as ESLint's `complexity` rule does (if, ?:, loops,
 * case, catch, &&, ||, ??, logical assignments, default values, each optional `?.` member access or
 * call). Cognitive: SonarSource's
 * definition — +1 per break in linear flow (if, else, ?:, switch, loops, catch, labelled jumps,
 * each run of like logical operators), plus the nesting depth for structures that nest.
 * Each function is measured on its own body: a nested function is a function of its own.
 */
import { parse, type TSESTree } from '@typescript-eslint/typescript-estree';
import { visitorKeys } from '@typescript-eslint/visitor-keys';

export interface FunctionMetrics {
  name: string;
  line: number;
  end_line: number;
  lines: number;
  parameters: number;
  cyclomatic: number;
  cognitive: number;
}

/** A function, or the module's own top-level code: what a maintainability index is computed over. */
export interface CodeUnit {
  sloc: number;
  cyclomatic: number;
  halsteadVolume: number;
}

export interface FileMetrics {
  /** Lines holding code (not blank, not only comments). */
  sloc: number;
  functions: FunctionMetrics[];
  /** Top-level code, then each function (with what it nests). */
  units: CodeUnit[];
  /** Of the whole file: module-level code counts as one more function body. */
  cyclomatic: number;
}

type Node = TSESTree.Node;

const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);
const LOOPS = new Set(['ForStatement', 'ForInStatement', 'ForOfStatement', 'WhileStatement', 'DoWhileStatement']);
const LOGICAL_ASSIGNMENT = new Set(['&&=', '||=', '??=']);
const OPERAND_TOKENS = new Set(['Identifier', 'PrivateIdentifier', 'String', 'Numeric', 'Template', 'RegularExpression', 'Boolean', 'Null', 'JSXText', 'JSXIdentifier']);

export function fileMetrics(text: string, jsx: boolean): FileMetrics {
  const ast = parse(text, { loc: true, range: true, comment: true, tokens: true, jsx, errorOnUnknownASTType: false });
  const functions: MeasuredFunction[] = [];
  const module = { cyclomatic: 1, cognitive: 0 };
  walk(ast, module, 0, functions, undefined);
  const tokens = ast.tokens ?? [];
  const within = (range: [number, number]) => tokens.filter((token) => token.range[0] >= range[0] && token.range[1] <= range[1]);
  const topLevel = functions.filter((fn) => !functions.some((outer) => outer !== fn && outer.range[0] <= fn.range[0] && fn.range[1] <= outer.range[1]));
  const moduleTokens = tokens.filter((token) => !topLevel.some((fn) => token.range[0] >= fn.range[0] && token.range[1] <= fn.range[1]));
  const unit = (unitTokens: TSESTree.Token[], cyclomatic: number): CodeUnit => ({ sloc: codeLines(unitTokens), cyclomatic, halsteadVolume: halsteadVolume(unitTokens) });
  return {
    sloc: codeLines(tokens),
    functions: functions.map(({ range: _range, ...fn }) => fn),
    units: [unit(moduleTokens, module.cyclomatic), ...functions.map((fn) => unit(within(fn.range), fn.cyclomatic))].filter((entry) => entry.sloc > 0),
    cyclomatic: module.cyclomatic + functions.reduce((sum, entry) => sum + entry.cyclomatic - 1, 0),
  };
}

interface Counts {
  cyclomatic: number;
  cognitive: number;
}

type MeasuredFunction = FunctionMetrics & { range: [number, number] };

function walk(node: Node, counts: Counts, nesting: number, functions: MeasuredFunction[], parent: Node | undefined): void {
  if (FUNCTIONS.has(node.type)) {
    measureFunction(node as TSESTree.FunctionLike, parent, functions);
    return;
  }
  countNode(node, counts, nesting, parent);
  for (const [child, childNesting] of children(node, nesting)) walk(child, counts, childNesting, functions, node);
}

function measureFunction(node: TSESTree.FunctionLike, parent: Node | undefined, functions: MeasuredFunction[]): void {
  const counts = { cyclomatic: 1, cognitive: 0 };
  const index = functions.length;
  for (const param of node.params) walk(param, counts, 0, functions, node);
  if (node.body) walk(node.body, counts, 0, functions, node);
  const { start, end } = node.loc;
  functions.splice(index, 0, { name: functionName(node, parent), line: start.line, end_line: end.line, lines: end.line - start.line + 1, parameters: node.params.length, ...counts, range: node.range });
}

function countNode(node: Node, counts: Counts, nesting: number, parent: Node | undefined): void {
  switch (node.type) {
    case 'IfStatement': {
      counts.cyclomatic += 1;
      const elseIf = parent?.type === 'IfStatement' && parent.alternate === node;
      counts.cognitive += elseIf ? 1 : 1 + nesting;
      if (node.alternate && node.alternate.type !== 'IfStatement') counts.cognitive += 1; // else
      return;
    }
    case 'ConditionalExpression':
    case 'CatchClause':
      counts.cyclomatic += 1;
      counts.cognitive += 1 + nesting;
      return;
    case 'SwitchStatement':
      counts.cognitive += 1 + nesting;
      return;
    case 'SwitchCase':
      if (node.test) counts.cyclomatic += 1;
      return;
    case 'LogicalExpression':
      counts.cyclomatic += 1;
      if (parent?.type !== 'LogicalExpression') counts.cognitive += operatorRuns(node);
      return;
    case 'AssignmentExpression':
      if (LOGICAL_ASSIGNMENT.has(node.operator)) counts.cyclomatic += 1;
      return;
    case 'AssignmentPattern':
      counts.cyclomatic += 1;
      return;
    // `a?.b` and `f?.()` short-circuit: ESLint's rule counts each optional link, not the chain.
    case 'MemberExpression':
    case 'CallExpression':
      if (node.optional) counts.cyclomatic += 1;
      return;
    case 'BreakStatement':
    case 'ContinueStatement':
      if (node.label) counts.cognitive += 1;
      return;
    default:
      if (LOOPS.has(node.type)) {
        counts.cyclomatic += 1;
        counts.cognitive += 1 + nesting;
      }
  }
}

/** Child nodes with the nesting level they are read at: bodies of branches and loops nest one deeper. */
function children(node: Node, nesting: number): Array<[Node, number]> {
  const nested = (child: Node | null | undefined, deeper: boolean): Array<[Node, number]> => (child ? [[child, deeper ? nesting + 1 : nesting]] : []);
  switch (node.type) {
    case 'IfStatement':
      // An else-if stays at its if's level: it is a continuation, not a nested structure.
      return [...nested(node.test, false), ...nested(node.consequent, true), ...nested(node.alternate, node.alternate?.type !== 'IfStatement')];
    case 'ConditionalExpression':
      return [...nested(node.test, false), ...nested(node.consequent, true), ...nested(node.alternate, true)];
    case 'CatchClause':
      return [...nested(node.param, false), ...nested(node.body, true)];
    case 'SwitchStatement':
      return [...nested(node.discriminant, false), ...node.cases.flatMap((entry) => nested(entry, true))];
    default: {
      const deeper = LOOPS.has(node.type);
      return childNodes(node).map((child) => [child, deeper && isLoopBody(node, child) ? nesting + 1 : nesting]);
    }
  }
}

function isLoopBody(loop: Node, child: Node): boolean {
  return 'body' in loop && loop.body === child;
}

function childNodes(node: Node): Node[] {
  const keys = visitorKeys[node.type] ?? [];
  const found: Node[] = [];
  for (const key of keys) {
    const value = (node as unknown as Record<string, unknown>)[key];
    if (Array.isArray(value)) found.push(...value.filter((item): item is Node => isNode(item)));
    else if (isNode(value)) found.push(value);
  }
  return found;
}

const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';

/** `a && b && c` is one run, `a && b || c` two: Sonar counts runs of like operators. */
function operatorRuns(node: TSESTree.LogicalExpression): number {
  const operators: string[] = [];
  const inOrder = (current: Node): void => {
    if (current.type !== 'LogicalExpression') return;
    inOrder(current.left);
    operators.push(current.operator);
    inOrder(current.right);
  };
  inOrder(node);
  return operators.filter((operator, index) => index === 0 || operator !== operators[index - 1]).length;
}

function functionName(node: TSESTree.FunctionLike, parent: Node | undefined): string {
  if ('id' in node && node.id?.type === 'Identifier') return node.id.name;
  if (parent?.type === 'MethodDefinition' || parent?.type === 'Property' || parent?.type === 'PropertyDefinition') {
    const key = parent.key;
    const name = key.type === 'Identifier' ? key.name : key.type === 'Literal' ? String(key.value) : key.type === 'PrivateIdentifier' ? `#${key.name}` : '[computed]';
    return parent.type === 'MethodDefinition' && parent.kind !== 'method' && parent.kind !== 'constructor' ? `${parent.kind} ${name}` : name;
  }
  if (parent?.type === 'VariableDeclarator' && parent.id.type === 'Identifier') return parent.id.name;
  if (parent?.type === 'AssignmentExpression' && parent.left.type === 'Identifier') return parent.left.name;
  return `(anonymous, line ${node.loc.start.line})`;
}

function codeLines(tokens: TSESTree.Token[]): number {
  const lines = new Set<number>();
  for (const token of tokens) for (let line = token.loc.start.line; line <= token.loc.end.line; line += 1) lines.add(line);
  return lines.size;
}

/** Halstead volume N·log2(n): operators are keywords and punctuators, operands names and literals. */
function halsteadVolume(tokens: TSESTree.Token[]): number {
  const distinct = new Set<string>();
  let total = 0;
  for (const token of tokens) {
    const kind = OPERAND_TOKENS.has(token.type) ? 'operand' : 'operator';
    distinct.add(`${kind}:${token.value}`);
    total += 1;
  }
  return distinct.size < 2 ? 0 : total * Math.log2(distinct.size);
}
