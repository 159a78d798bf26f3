/**
 * The taint engine: an abstract interpreter over the ESTree ASTs ESLint has already parsed. Each
 * function is run once with its parameters as placeholders; what reaches a sink from a placeholder
 * becomes the function's summary, replayed at every call that passes tainted data in that
 * position (across functions, classes, constructor functions and modules linked by relative
 * require/import). Flow-insensitive inside branches and loops (their assignments join), strong
 * updates in straight-line code; work per function and in total is capped.
 */
import * as path from 'node:path';
import type { TSESTree } from '@typescript-eslint/types';
import { collectFunctions, functionName, isExpression, isNode, isVerbHandler, literalKey, nameOf, nestSource, propertyName, staticKey, stepAt, typeText } from './ast';
import { BROWSER_SOURCES, ELEMENT_CALLBACKS, KOA_INPUTS, NUMERIC, OBJECT_INPUTS, PASSING_CALLS, PASSING_METHODS, REQUEST_INPUTS, REQUEST_NAMES, REQUEST_READERS, RESPONSE_CHAINS, RESPONSE_NAMES, SANITIZERS, SANITIZING_METHODS } from './catalogue';
import { cleaned, derived, join, NOTHING, taintOf, withStep, type FunctionNode, type Step, type Taint, type Value } from './model';
import { TAINT_RULES, type SinkClass, type TaintRuleId } from './rules';
import { normalModule, sinkArguments, type CallSite } from './sinks';

type Node = TSESTree.Node;

/** What the engine needs of a variable from ESLint's scope analysis. */
export interface ScopeVariable {
  identifiers: readonly object[];
  defs: ReadonlyArray<{ type: string; node: unknown; parent?: unknown }>;
}
export interface ParsedModule {
  file: string;
  text: string;
  ast: TSESTree.Program;
  scopes: ReadonlyArray<{ references: ReadonlyArray<{ identifier: object; resolved: ScopeVariable | null }>; variables: readonly ScopeVariable[] }>;
}

/** `res.render(view, model)` with request data in the model: XSS if the template prints it unescaped (templates.ts). */
export interface RenderSite {
  view: string;
  /** Tainted members of the model by path: 'output.searchTerm'. */
  members: Array<{ path: string; taint: Taint }>;
  at: Step;
}

export interface TaintFinding {
  rule: TaintRuleId;
  file: string;
  line: number;
  column: number;
  end_line: number;
  end_column: number;
  message: string;
  /** Source first, sink last. */
  flow: Step[];
}

interface ModuleState {
  parsed: ParsedModule;
  variables: Map<object, ScopeVariable | null>;
  exports: Value;
  state: 'new' | 'running' | 'done';
  functions: FunctionNode[];
  /** This module and the ones it imports relatively, for calls resolved by name. */
  neighbours?: ModuleState[];
  methods?: Map<string, FunctionNode[]>;
}

interface Frame {
  module: ModuleState;
  thisValue: Value;
  /** > 0 inside a branch or loop: assignments join instead of replacing. */
  conditional: number;
  returns: Value;
  work: number;
}

interface ParamSink {
  index: number;
  rule: TaintRuleId;
  taint: Taint;
  sink: SinkStep;
  raw?: boolean;
}

/** A sink's step, with where the sink expression ends. */
interface SinkStep extends Step {
  endLine: number;
  endColumn: number;
}

/** Evaluations one function may take (a generated 10,000-line function stops there, the rest goes on). */
const MAX_WORK_PER_FUNCTION = 40_000;
/** Evaluations in one scan, over all functions. */
const MAX_TOTAL_WORK = 20_000_000;
const MAX_PARAM_SINKS = 64;
const MAX_DEPTH = 400;
const BROWSER_SINKS = new Set<TaintRuleId>(['taint/code-injection', 'taint/xss', 'taint/open-redirect', 'taint/redos']);
const ALL_CLASSES = Object.keys(TAINT_RULES).map((id) => id.slice('taint/'.length) as SinkClass);
const RELATIVE_IMPORT = /(?:\bfrom\s*|\brequire\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g;
const EXTENSIONS = ['', '.js', '.ts', '.tsx', '.jsx', '.mjs', '.cjs', '.mts', '.cts', '/index.js', '/index.ts', '/index.tsx', '/index.mjs'];

class OverBudget extends Error {}

export class TaintEngine {
  private readonly modules = new Map<string, ModuleState>();
  private readonly moduleOf = new Map<FunctionNode, ModuleState>();
  private readonly env = new Map<ScopeVariable, Value>();
  private readonly summaries = new Map<FunctionNode, { ret: Value }>();
  private readonly paramSinks = new Map<FunctionNode, ParamSink[]>();
  private readonly capturedThis = new Map<FunctionNode, Value>();
  private readonly instances = new Map<object, Value>();
  private readonly classes = new Map<Node, Value>();
  private readonly superclasses = new Map<Node, Node>();
  private readonly findings = new Map<string, TaintFinding>();
  private readonly globals = new Map<string, Value>();
  private totalWork = 0;
  private depth = 0;
  /** True when the total budget ran out and functions went unanalysed. */
  truncated = false;
  readonly renders: RenderSite[] = [];
  /** Files where the engine failed on a function, and why (see cutShort). */
  readonly failed: Array<{ file: string; message: string }> = [];

  constructor(parsed: readonly ParsedModule[]) {
    for (const module of parsed) {
      const variables = new Map<object, ScopeVariable | null>();
      for (const scope of module.scopes) {
        for (const variable of scope.variables) for (const identifier of variable.identifiers) variables.set(identifier, variable);
        for (const reference of scope.references) variables.set(reference.identifier, reference.resolved);
      }
      const state: ModuleState = { parsed: module, variables, exports: { props: new Map() }, state: 'new', functions: [] };
      collectFunctions(module.ast, state.functions);
      for (const fn of state.functions) this.moduleOf.set(fn, state);
      this.modules.set(module.file, state);
    }
  }

  run(): TaintFinding[] {
    for (const module of this.modules.values()) {
      this.analyzeModule(module);
      for (const fn of module.functions) this.analyzeFunction(fn);
    }
    return [...this.findings.values()];
  }

  // ---- modules -------------------------------------------------------------------------------

  private analyzeModule(module: ModuleState): void {
    if (module.state !== 'new') return;
    module.state = 'running';
    const frame: Frame = { module, thisValue: module.exports, conditional: 0, returns: NOTHING, work: 0 };
    try {
      for (const statement of module.parsed.ast.body) this.exec(statement, frame);
    } catch (error) {
      this.cutShort(error, module.parsed.file);
    }
    module.state = 'done';
  }

  private exportsOf(from: string, specifier: string): Value | undefined {
    if (!specifier.startsWith('.')) return undefined;
    const module = this.resolve(from, specifier);
    if (!module) return NOTHING;
    this.analyzeModule(module);
    return module.exports;
  }

  private resolve(from: string, specifier: string): ModuleState | undefined {
    const base = path.posix.join(path.posix.dirname(from), specifier);
    const candidates = [...EXTENSIONS.map((extension) => base + extension), base.replace(/\.[cm]?js$/, '.ts')];
    return candidates.map((candidate) => this.modules.get(candidate)).find((found) => found !== undefined);
  }

  /**
   * A method called on an object the engine knows nothing of (`this.usersService.find(id)`, an
   * injected dependency): the one function of that name defined in this file or a file it imports
   * relatively, if there is exactly one.
   */
  private byName(module: ModuleState, name: string): readonly FunctionNode[] {
    // A string, array or promise method is far likelier than a same-named function of ours.
    if (PASSING_METHODS.has(name) || ELEMENT_CALLBACKS.has(name) || name === 'constructor') return [];
    module.neighbours ??= [module, ...[...module.parsed.text.matchAll(RELATIVE_IMPORT)].map((match) => this.resolve(module.parsed.file, match[1])).filter((found): found is ModuleState => found !== undefined)];
    const found = new Set<FunctionNode>();
    for (const neighbour of module.neighbours) {
      neighbour.methods ??= methodsByName(neighbour.functions);
      for (const fn of neighbour.methods.get(name) ?? []) found.add(fn);
    }
    return found.size === 1 ? [...found] : [];
  }

  private required(frame: Frame, specifier: string): Value {
    return this.exportsOf(frame.module.parsed.file, specifier) ?? { module: normalModule(specifier) };
  }

  /**
   * A function over budget stops there; one the engine fails on (a bug of ours, on code it does
   * not expect) is left out and named in `failed`, so one odd file cannot end a whole scan.
   */
  private cutShort(error: unknown, file: string): void {
    if (error instanceof OverBudget) return;
    if (error instanceof RangeError || error instanceof TypeError) this.failed.push({ file, message: error.message });
    else throw error;
  }

  // ---- functions -----------------------------------------------------------------------------

  private analyzeFunction(fn: FunctionNode): { ret: Value } {
    const known = this.summaries.get(fn);
    if (known) return known;
    const summary = { ret: NOTHING };
    this.summaries.set(fn, summary);
    const module = this.moduleOf.get(fn);
    if (!module || this.totalWork > MAX_TOTAL_WORK) {
      if (module) this.truncated = true;
      return summary;
    }
    const frame: Frame = { module, thisValue: this.thisFor(fn), conditional: 0, returns: NOTHING, work: 0 };
    try {
      fn.params.forEach((param, index) => this.bind(param, this.paramValue(fn, index, param), frame));
      if (fn.body.type === 'BlockStatement') this.exec(fn.body, frame);
      else frame.returns = this.returned(this.eval(fn.body, frame), fn.body, frame);
    } catch (error) {
      this.cutShort(error, module.parsed.file);
    }
    summary.ret = frame.returns;
    return summary;
  }

  private thisFor(fn: FunctionNode): Value {
    if (fn.type === 'ArrowFunctionExpression') return this.capturedThis.get(fn) ?? NOTHING;
    const owner = fn.parent;
    if ((owner.type === 'MethodDefinition' || owner.type === 'PropertyDefinition') && !owner.static) return this.instanceOf(owner.parent.parent);
    return this.instanceOf(fn);
  }

  /** What a parameter holds when the function runs on its own: a request, a response, or a placeholder. */
  private paramValue(fn: FunctionNode, index: number, param: TSESTree.Parameter): Value {
    const target = param.type === 'TSParameterProperty' ? param.parameter : param;
    const identifier = target.type === 'AssignmentPattern' ? target.left : target;
    const nest = 'decorators' in target ? nestSource(target.decorators ?? []) : undefined;
    const file = this.moduleOf.get(fn)?.parsed.file ?? '';
    if (nest?.input === 'request') return { request: 'http' };
    if (nest) return { taint: { steps: [stepAt(file, target, `source: @${nest.decorator}() parameter`)], raw: OBJECT_INPUTS.has(nest.input), clean: new Set() } };
    const name = identifier.type === 'Identifier' ? identifier.name : '';
    const annotation = identifier.type === 'Identifier' ? typeText(identifier) : '';
    if (index === 0 && REQUEST_NAMES.has(name) && (name === 'req' || fn.params.length >= 2 || /Request\b/.test(annotation) || isVerbHandler(fn))) return { request: 'http' };
    if (index === 0 && name === 'ctx' && (annotation === '' || /^(?:Koa\.)?(?:Parameterized|Router)?Context\b/.test(annotation)) && fn.params.length <= 2) return { request: 'koa', response: true };
    if (index > 0 && RESPONSE_NAMES.has(name)) return { response: true };
    return { taint: { steps: [stepAt(file, target, `parameter ${name || index + 1}`)], param: { owner: fn, index }, raw: true, clean: new Set() } };
  }

  /** A call of known functions: their summaries replayed with the arguments' taint. */
  private call(fns: readonly FunctionNode[], args: readonly Value[], site: Node, frame: Frame): Value {
    let result: Value = NOTHING;
    for (const fn of fns) {
      const summary = this.analyzeFunction(fn);
      for (const pending of [...(this.paramSinks.get(fn) ?? [])]) {
        const argument = args[pending.index]?.taint;
        if (argument) this.report(pending.rule, compose(withStep(argument, stepAt(frame.module.parsed.file, site, `into ${functionName(fn)}()`)), pending.taint), pending.sink, pending.raw);
      }
      result = join(result, this.substitute(summary.ret, fn, args, site, frame));
    }
    return result;
  }

  private substitute(value: Value, fn: FunctionNode, args: readonly Value[], site: Node, frame: Frame): Value {
    const param = value.taint?.param;
    if (!value.taint || param?.owner !== fn) return value;
    const argument = args[param.index]?.taint;
    const file = frame.module.parsed.file;
    return { ...value, taint: argument && compose(withStep(argument, stepAt(file, site, `into ${functionName(fn)}()`)), withStep(value.taint, stepAt(file, site, `returned by ${functionName(fn)}()`))) };
  }

  // ---- sinks ---------------------------------------------------------------------------------

  private report(rule: TaintRuleId, taint: Taint, sink: SinkStep, raw?: boolean): void {
    if (taint.clean.has(rule.slice('taint/'.length) as SinkClass) || (raw && !taint.raw) || (taint.browser && !BROWSER_SINKS.has(rule))) return;
    if (taint.param) {
      const pending = this.paramSinks.get(taint.param.owner) ?? [];
      this.paramSinks.set(taint.param.owner, pending);
      const duplicate = pending.some((entry) => entry.rule === rule && entry.index === taint.param?.index && sameStep(entry.sink, sink));
      if (!duplicate && pending.length < MAX_PARAM_SINKS) pending.push({ index: taint.param.index, rule, taint, sink, raw });
      return;
    }
    const key = `${rule}\0${sink.file}\0${sink.line}\0${sink.column}`;
    const { endLine, endColumn, ...step } = sink;
    const flow = [...taint.steps, step];
    const earlier = this.findings.get(key);
    if (earlier && earlier.flow.length <= flow.length) return;
    const source = taint.steps[0];
    this.findings.set(key, {
      rule,
      file: sink.file,
      line: sink.line,
      column: sink.column,
      end_line: endLine,
      end_column: endColumn,
      message: `${sink.note.replace(/^sink: /, '')} receives ${source.note.replace(/^source: /, '')} (${source.file}:${source.line}) — ${TAINT_RULES[rule].description}`,
      flow,
    });
  }

  private sink(rule: TaintRuleId, value: Value, node: Node, label: string, frame: Frame, raw?: boolean): void {
    if (value.taint) this.report(rule, value.taint, { ...stepAt(frame.module.parsed.file, node, `sink: ${label}`), endLine: node.loc.end.line, endColumn: node.loc.end.column + 1 }, raw);
  }

  // ---- statements ----------------------------------------------------------------------------

  private exec(node: Node, frame: Frame): void {
    switch (node.type) {
      case 'ExpressionStatement':
        this.eval(node.expression, frame);
        return;
      case 'VariableDeclaration':
        for (const declarator of node.declarations) if (declarator.init) this.bind(declarator.id, this.eval(declarator.init, frame), frame);
        return;
      case 'ReturnStatement':
        if (node.argument) frame.returns = join(frame.returns, this.returned(this.eval(node.argument, frame), node, frame));
        return;
      case 'BlockStatement':
      case 'StaticBlock':
        for (const statement of node.body) this.exec(statement, frame);
        return;
      case 'IfStatement':
        this.eval(node.test, frame);
        this.applyChecks(node.test, frame);
        this.branch(frame, node.consequent, node.alternate);
        return;
      case 'ForStatement':
        if (node.init) (node.init.type === 'VariableDeclaration' ? this.exec(node.init, frame) : this.eval(node.init, frame));
        this.loop(frame, node.body, node.test, node.update);
        return;
      case 'ForInStatement':
      case 'ForOfStatement': {
        const collection = this.eval(node.right, frame);
        const element: Value = collection.taint ? { taint: node.type === 'ForInStatement' ? derived(collection.taint) : collection.taint } : NOTHING;
        this.bind(node.left.type === 'VariableDeclaration' ? node.left.declarations[0].id : node.left, element, frame);
        this.loop(frame, node.body);
        return;
      }
      case 'WhileStatement':
      case 'DoWhileStatement':
        this.loop(frame, node.body, node.test);
        return;
      case 'SwitchStatement':
        this.eval(node.discriminant, frame);
        frame.conditional += 1;
        for (const branch of node.cases) {
          if (branch.test) this.eval(branch.test, frame);
          for (const statement of branch.consequent) this.exec(statement, frame);
        }
        frame.conditional -= 1;
        return;
      case 'TryStatement':
        this.exec(node.block, frame);
        this.branch(frame, node.handler?.body ?? null, node.finalizer);
        return;
      case 'LabeledStatement':
        this.exec(node.body, frame);
        return;
      case 'ThrowStatement':
        this.eval(node.argument, frame);
        return;
      case 'ExportNamedDeclaration':
        this.exportNamed(node, frame);
        return;
      case 'ExportDefaultDeclaration': {
        const declaration = node.declaration;
        const value = declaration.type === 'FunctionDeclaration' ? functionValue(declaration) : declaration.type === 'ClassDeclaration' ? this.classValue(declaration, frame) : isExpression(declaration) ? this.eval(declaration, frame) : NOTHING;
        exportsProps(frame.module).set('default', value);
        return;
      }
      default:
        return;
    }
  }

  private exportNamed(node: TSESTree.ExportNamedDeclaration, frame: Frame): void {
    const exported = exportsProps(frame.module);
    const declaration = node.declaration;
    if (declaration?.type === 'VariableDeclaration') {
      this.exec(declaration, frame);
      for (const declarator of declaration.declarations) if (declarator.id.type === 'Identifier') exported.set(declarator.id.name, this.eval(declarator.id, frame));
    } else if (declaration?.type === 'FunctionDeclaration' && declaration.id) exported.set(declaration.id.name, functionValue(declaration));
    else if (declaration?.type === 'ClassDeclaration' && declaration.id) exported.set(declaration.id.name, this.classValue(declaration, frame));
    const from = node.source ? this.exportsOf(frame.module.parsed.file, node.source.value) : undefined;
    for (const specifier of node.specifiers) {
      const local = specifier.local.type === 'Identifier' ? specifier.local.name : specifier.local.value;
      const name = specifier.exported.type === 'Identifier' ? specifier.exported.name : specifier.exported.value;
      exported.set(name, from ? (from.props?.get(local) ?? NOTHING) : specifier.local.type === 'Identifier' ? this.eval(specifier.local, frame) : NOTHING);
    }
  }

  private branch(frame: Frame, ...bodies: Array<Node | null | undefined>): void {
    frame.conditional += 1;
    for (const body of bodies) if (body) this.exec(body, frame);
    frame.conditional -= 1;
  }

  /** A loop body runs twice: enough for a value assigned late in one iteration to reach a sink early in the next. */
  private loop(frame: Frame, body: Node, ...expressions: Array<Node | null | undefined>): void {
    frame.conditional += 1;
    for (let round = 0; round < 2; round += 1) {
      for (const expression of expressions) if (expression) this.eval(expression, frame);
      this.exec(body, frame);
    }
    frame.conditional -= 1;
  }

  private returned(value: Value, node: Node, frame: Frame): Value {
    return value.taint ? { ...value, taint: withStep(value.taint, stepAt(frame.module.parsed.file, node, 'returned')) } : value;
  }

  /**
   * Checks that make a variable safe from here on: an allow-list (`list.includes(x)`, `set.has(x)`),
   * a pattern test (`/^\d+$/.test(x)`), a containment check (`full.startsWith(root)`, `x.includes('..')`).
   */
  private applyChecks(test: Node, frame: Frame): void {
    if (test.type === 'LogicalExpression') return [test.left, test.right].forEach((side) => this.applyChecks(side, frame));
    if (test.type === 'UnaryExpression' || test.type === 'BinaryExpression') return this.applyChecks(test.type === 'UnaryExpression' ? test.argument : test.left, frame);
    if (test.type !== 'CallExpression' || test.callee.type !== 'MemberExpression') return;
    const name = propertyName(test.callee);
    const receiver = test.callee.object;
    const first = test.arguments[0];
    if ((name === 'includes' || name === 'has' || name === 'test' || name === 'indexOf') && first?.type === 'Identifier' && receiver.type !== 'Literal') this.clean(first, ALL_CLASSES, frame);
    if (name === 'startsWith' && receiver.type === 'Identifier') this.clean(receiver, ['path-traversal', 'open-redirect', 'ssrf'], frame);
    if ((name === 'includes' || name === 'indexOf') && first?.type === 'Literal' && String(first.value).includes('..') && receiver.type === 'Identifier') this.clean(receiver, ['path-traversal'], frame);
    if (name?.startsWith('is') && first?.type === 'Identifier' && this.eval(receiver, frame).module === 'validator') this.clean(first, ALL_CLASSES, frame);
  }

  private clean(identifier: TSESTree.Identifier, classes: readonly SinkClass[], frame: Frame): void {
    const variable = frame.module.variables.get(identifier);
    const value = variable && this.env.get(variable);
    if (variable && value?.taint) this.env.set(variable, { ...value, taint: cleaned(value.taint, classes) });
  }

  // ---- bindings ------------------------------------------------------------------------------

  private bind(pattern: Node, value: Value, frame: Frame): void {
    switch (pattern.type) {
      case 'Identifier': {
        const variable = frame.module.variables.get(pattern);
        // An assignment to an undeclared name makes a global (sloppy-mode code does this).
        if (!variable || isGlobal(pattern, frame)) {
          if (value !== NOTHING) this.globals.set(pattern.name, frame.conditional > 0 ? join(this.globals.get(pattern.name) ?? NOTHING, value) : value);
          return;
        }
        const step = stepAt(frame.module.parsed.file, pattern, pattern.name);
        const last = value.taint?.steps[value.taint.steps.length - 1];
        const bound = value.taint && !(last && last.line === step.line && last.column === step.column) ? { ...value, taint: withStep(value.taint, step) } : value;
        const before = this.env.get(variable);
        this.env.set(variable, frame.conditional > 0 && before ? join(before, bound) : bound);
        return;
      }
      case 'ObjectPattern':
        for (const property of pattern.properties) {
          if (property.type === 'RestElement') this.bind(property.argument, value, frame);
          else this.bind(property.value, this.member(value, staticKey(property, (key) => this.eval(key, frame)), property, frame), frame);
        }
        return;
      case 'ArrayPattern':
        for (const element of pattern.elements) if (element) this.bind(element, value.taint ? { taint: value.taint } : NOTHING, frame);
        return;
      case 'AssignmentPattern':
        this.bind(pattern.left, join(value, this.eval(pattern.right, frame)), frame);
        return;
      case 'RestElement':
        this.bind(pattern.argument, value, frame);
        return;
      case 'TSParameterProperty':
        this.bind(pattern.parameter, value, frame);
        return;
      case 'MemberExpression':
        this.assignMember(pattern, value, frame);
        return;
      default:
        return;
    }
  }

  private assignMember(target: TSESTree.MemberExpression, value: Value, frame: Frame): void {
    const name = propertyName(target);
    const object = target.object;
    if (name === 'innerHTML' || name === 'outerHTML') this.sink('taint/xss', value, target, name, frame);
    if (object.type === 'Identifier' && object.name === 'module' && name === 'exports' && isGlobal(object, frame)) {
      frame.module.exports = value.props || value.fns ? value : { ...value, props: new Map() };
      return;
    }
    if (isExportsObject(object, frame) && name) {
      exportsProps(frame.module).set(name, value);
      return;
    }
    // X.prototype.method = function …: a method of X's instances.
    if (object.type === 'MemberExpression' && propertyName(object) === 'prototype' && name) {
      const owner = this.eval(object.object, frame);
      for (const fn of owner.fns ?? []) this.instanceOf(fn).props?.set(name, value);
      return;
    }
    const holder = this.eval(object, frame);
    if (holder.module === 'global:location' && name === 'href') this.sink('taint/open-redirect', value, target, 'location.href', frame);
    if (holder.request === 'koa' && name === 'body' && value.taint && !value.taint.raw) this.sink('taint/xss', value, target, 'ctx.body', frame);
    if (!name) return;
    if (holder.props) holder.props.set(name, holder.props.has(name) && frame.conditional > 0 ? join(holder.props.get(name) as Value, value) : value);
    else if (object.type === 'Identifier' && frame.module.variables.get(object)) {
      const variable = frame.module.variables.get(object) as ScopeVariable;
      this.env.set(variable, { ...holder, props: new Map([[name, value]]) });
    }
  }

  // ---- expressions ---------------------------------------------------------------------------

  private eval(node: Node, frame: Frame): Value {
    frame.work += 1;
    this.totalWork += 1;
    if (frame.work > MAX_WORK_PER_FUNCTION) throw new OverBudget();
    if (this.totalWork > MAX_TOTAL_WORK) {
      this.truncated = true;
      throw new OverBudget();
    }
    // Generated code nests expressions thousands deep ('a' + 'b' + …): past this the value is unknown, not a stack overflow.
    if (this.depth >= MAX_DEPTH) return NOTHING;
    this.depth += 1;
    try {
      return this.evalNode(node, frame);
    } finally {
      this.depth -= 1;
    }
  }

  private evalNode(node: Node, frame: Frame): Value {
    switch (node.type) {
      case 'Identifier':
        return this.identifier(node, frame);
      case 'MemberExpression': {
        const object = this.eval(node.object, frame);
        return this.member(object, node.computed ? literalKey(node.property, (key) => this.eval(key, frame)) : propertyName(node), node, frame);
      }
      case 'CallExpression':
      case 'NewExpression':
        return this.evalCall(node, frame);
      case 'TemplateLiteral':
        return { taint: derived(taintOf(node.expressions.map((expression) => this.eval(expression, frame)))) };
      case 'TaggedTemplateExpression': {
        const tag = this.eval(node.tag, frame);
        const parts = node.quasi.expressions.map((expression) => this.eval(expression, frame));
        // sql`…` tags (sql-template-strings, slonik, postgres.js) send the values as parameters.
        return /(?:^|\.)sql$/i.test(tag.module ?? '') || (node.tag.type === 'Identifier' && /^sql$/i.test(node.tag.name)) ? NOTHING : { taint: derived(taintOf(parts)) };
      }
      case 'BinaryExpression': {
        const left = node.left.type === 'PrivateIdentifier' ? NOTHING : this.eval(node.left, frame);
        const right = this.eval(node.right, frame);
        return node.operator === '+' ? { taint: derived(taintOf([left, right])) } : NOTHING;
      }
      case 'LogicalExpression':
        return join(this.eval(node.left, frame), this.eval(node.right, frame));
      case 'ConditionalExpression':
        this.eval(node.test, frame);
        return join(this.eval(node.consequent, frame), this.eval(node.alternate, frame));
      case 'AssignmentExpression':
        return this.assign(node, frame);
      case 'ObjectExpression':
        return this.object(node, frame);
      case 'ArrayExpression':
        return { taint: derived(taintOf(node.elements.map((element) => (element ? this.eval(element.type === 'SpreadElement' ? element.argument : element, frame) : NOTHING)))) };
      case 'AwaitExpression':
      case 'SpreadElement':
        return this.eval(node.argument, frame);
      case 'YieldExpression':
        return node.argument ? this.eval(node.argument, frame) : NOTHING;
      case 'ChainExpression':
      case 'TSAsExpression':
      case 'TSNonNullExpression':
      case 'TSTypeAssertion':
      case 'TSSatisfiesExpression':
      case 'TSInstantiationExpression':
        return this.eval(node.expression, frame);
      case 'SequenceExpression':
        return node.expressions.map((expression) => this.eval(expression, frame)).pop() ?? NOTHING;
      case 'UnaryExpression':
      case 'UpdateExpression':
        this.eval(node.argument, frame);
        return NOTHING;
      case 'ArrowFunctionExpression':
        this.capturedThis.set(node, frame.thisValue);
        return functionValue(node);
      case 'FunctionExpression':
        return functionValue(node);
      case 'ClassExpression':
        return this.classValue(node, frame);
      case 'ThisExpression':
        return frame.thisValue;
      case 'JSXElement':
        return this.jsx(node, frame);
      default:
        return NOTHING;
    }
  }

  private identifier(node: TSESTree.Identifier, frame: Frame): Value {
    const variable = frame.module.variables.get(node);
    if (!variable || isGlobal(node, frame)) return this.globals.get(node.name) ?? (node.name === 'undefined' ? NOTHING : { module: `global:${node.name}` });
    const known = this.env.get(variable);
    if (known) return known;
    const value = this.declared(variable, frame);
    if (value !== NOTHING) this.env.set(variable, value);
    return value;
  }

  /** A variable no assignment reached yet: a hoisted function, a class, an import. */
  private declared(variable: ScopeVariable, frame: Frame): Value {
    const definition = variable.defs[0];
    const node = definition?.node as Node | undefined;
    if (!definition || !node) return NOTHING;
    if (definition.type === 'FunctionName' && node.type === 'FunctionDeclaration') return functionValue(node);
    if (definition.type === 'ClassName' && (node.type === 'ClassDeclaration' || node.type === 'ClassExpression')) return this.classValue(node, frame);
    if (definition.type !== 'ImportBinding') return NOTHING;
    const declaration = definition.parent as TSESTree.ImportDeclaration;
    const specifier = declaration.source.value;
    const exported = this.exportsOf(frame.module.parsed.file, specifier);
    const module = normalModule(specifier);
    if (node.type === 'ImportNamespaceSpecifier') return exported ?? { module };
    if (node.type === 'ImportDefaultSpecifier') return exported ? (exported.props?.get('default') ?? exported) : { module };
    if (node.type !== 'ImportSpecifier') return NOTHING;
    const imported = node.imported.type === 'Identifier' ? node.imported.name : node.imported.value;
    if (exported) return exported.props?.get(imported) ?? NOTHING;
    return { module: imported === 'default' ? module : `${module}.${imported}` };
  }

  /** `object.key`: request inputs become sources, a module's members keep its name, known members their value. */
  private member(object: Value, key: string | undefined, node: Node, frame: Frame): Value {
    const file = frame.module.parsed.file;
    const source = (note: string, raw: boolean, browser?: boolean): Value => ({ taint: { steps: [stepAt(file, node, `source: ${note}`)], raw, clean: new Set(), browser } });
    if (key !== undefined) {
      if (object.request === 'http' && REQUEST_INPUTS.has(key)) return source(this.text(node, frame), OBJECT_INPUTS.has(key));
      if (object.request === 'koa' && KOA_INPUTS.has(key)) return source(this.text(node, frame), OBJECT_INPUTS.has(key));
      if (object.request === 'koa' && key === 'request') return { request: 'http' };
      if (object.module === 'global:process' && key === 'argv') return source('process.argv', false);
      const global = object.module?.startsWith('global:') ? object.module.slice('global:'.length) : undefined;
      if (global && BROWSER_SOURCES[global]?.has(key)) return source(`${global}.${key}`, false, true);
      if (global === 'window' || global === 'globalThis') return { module: `global:${key}` };
    }
    if (object.taint) return { taint: this.longerSource(object.taint, node, frame) };
    const known = key === undefined ? undefined : object.props?.get(key);
    if (known) return known;
    if (object.module && !object.request) return { module: key === undefined ? object.module : `${object.module}.${key}` };
    return NOTHING;
  }

  /** `req.query.file` names its source better than `req.query`: a source read further at once takes the longer name. */
  private longerSource(taint: Taint, node: Node, frame: Frame): Taint {
    const [only] = taint.steps;
    if (taint.steps.length !== 1 || taint.param || node.type !== 'MemberExpression' || node.computed) return taint;
    const start = node.object.loc.start;
    if (only.line !== start.line || only.column !== start.column + 1) return taint;
    return { ...taint, steps: [{ ...only, note: `source: ${this.text(node, frame)}` }] };
  }

  private assign(node: TSESTree.AssignmentExpression, frame: Frame): Value {
    const right = this.eval(node.right, frame);
    if (node.operator === '=') {
      this.bind(node.left, right, frame);
      return right;
    }
    const left = this.eval(node.left, frame);
    const combined: Value = node.operator === '+=' || node.operator === '??=' || node.operator === '||=' ? { taint: derived(taintOf([left, right])) } : NOTHING;
    if (combined.taint) this.bind(node.left, combined, frame);
    return combined;
  }

  private object(node: TSESTree.ObjectExpression, frame: Frame): Value {
    const props = new Map<string, Value>();
    let taint: Taint | undefined;
    for (const property of node.properties) {
      if (property.type === 'SpreadElement') {
        const spread = this.eval(property.argument, frame);
        for (const [key, value] of spread.props ?? []) props.set(key, value);
        taint ??= spread.taint;
        continue;
      }
      const key = staticKey(property, (computed) => this.eval(computed, frame));
      const value = isExpression(property.value) ? this.eval(property.value, frame) : NOTHING;
      if (key === '$where') this.sink('taint/nosql-injection', value, property, 'a $where clause', frame);
      if (key !== undefined) props.set(key, value);
    }
    return { taint, props };
  }

  /** React's dangerouslySetInnerHTML={{ __html: … }} is innerHTML by another name. */
  private jsx(node: TSESTree.JSXElement, frame: Frame): Value {
    for (const attribute of node.openingElement.attributes) {
      if (attribute.type !== 'JSXAttribute' || attribute.name.name !== 'dangerouslySetInnerHTML' || attribute.value?.type !== 'JSXExpressionContainer') continue;
      const expression = attribute.value.expression;
      if (expression.type === 'JSXEmptyExpression') continue;
      const html = this.eval(expression, frame).props?.get('__html');
      if (html) this.sink('taint/xss', html, attribute, 'dangerouslySetInnerHTML', frame);
    }
    for (const child of node.children) if (child.type === 'JSXElement') this.jsx(child, frame);
    return NOTHING;
  }

  private evalCall(node: TSESTree.CallExpression | TSESTree.NewExpression, frame: Frame): Value {
    const callee = node.callee;
    if (callee.type === 'Identifier' && callee.name === 'require' && isGlobal(callee, frame)) {
      const first = node.arguments[0];
      return first?.type === 'Literal' && typeof first.value === 'string' ? this.required(frame, first.value) : NOTHING;
    }
    const args = node.arguments.map((argument) => this.eval(argument, frame));
    let receiver: Value | undefined;
    let receiverName: string | undefined;
    let name: string;
    let target: Value;
    if (callee.type === 'MemberExpression') {
      receiver = this.eval(callee.object, frame);
      receiverName = nameOf(callee.object);
      name = (callee.computed ? literalKey(callee.property, (key) => this.eval(key, frame)) : propertyName(callee)) ?? '';
      target = this.member(receiver, name, callee, frame);
    } else {
      name = callee.type === 'Identifier' ? callee.name : '';
      target = this.eval(callee, frame);
    }
    const file = frame.module.parsed.file;
    if (receiver?.request && REQUEST_READERS.has(name)) return { taint: { steps: [stepAt(file, node, `source: ${this.text(node, frame)}`)], raw: name !== 'get' && name !== 'header' && name !== 'param', clean: new Set() } };
    if (receiver?.response && !receiver.request && RESPONSE_CHAINS.has(name)) return receiver;
    const site: CallSite = { name, module: target.module, receiver, receiverName, args, argNodes: node.arguments };
    for (const argument of sinkArguments(site)) this.sink(argument.rule, argument.value, node, argument.label, frame, argument.raw);
    const view = node.arguments[0];
    if (name === 'render' && receiver?.response && view?.type === 'Literal' && typeof view.value === 'string' && args[1]?.props) {
      const members = taintedMembers(args[1], '', 0);
      if (members.length > 0) this.renders.push({ view: view.value, members, at: stepAt(file, node, `${receiverName ?? 'res'}.render('${view.value}')`) });
    }

    const qualified = target.module && normalModule(target.module.replace(/^global:/, ''));
    const argumentTaint = taintOf(args);
    if (qualified && NUMERIC.has(qualified)) return NOTHING;
    const sanitizer = qualified && SANITIZERS.find((entry) => entry.match.test(qualified));
    if (sanitizer) return { taint: cleaned(argumentTaint, sanitizer.classes) };
    const method = receiver && SANITIZING_METHODS.find((entry) => entry.match.test(name));
    if (method && args.length > 0) return { taint: cleaned(args[0].taint, method.classes) };
    if (receiver?.taint && (name === 'replace' || name === 'replaceAll')) return { taint: replaced(receiver.taint, node.arguments) };

    const fns = target.fns ?? (callee.type === 'MemberExpression' && receiver && isOpaque(receiver) && name ? this.byName(frame.module, name) : undefined);
    let result: Value = fns && fns.length > 0 ? this.call(fns, args, node, frame) : NOTHING;
    if (node.type === 'NewExpression' && (target.klass || target.fns)) result = target.klass ? this.instanceOf(target.klass) : this.instanceOf(target.fns?.[0] as FunctionNode);
    // Callbacks of an element-wise method see the elements; promise callbacks the resolved value.
    if (receiver?.taint && ELEMENT_CALLBACKS.has(name)) for (const argument of args) if (argument.fns) this.call(argument.fns, [{ taint: receiver.taint }], node, frame);
    if (receiver?.taint && PASSING_METHODS.has(name)) result = join(result, { taint: name === 'get' || name === 'getAll' ? receiver.taint : derived(receiver.taint) });
    if (qualified && PASSING_CALLS.test(qualified)) result = join(result, { taint: qualified === 'JSON.parse' ? argumentTaint && { ...argumentTaint, raw: true } : derived(argumentTaint) });
    return result;
  }

  // ---- classes and instances -----------------------------------------------------------------

  private classValue(node: TSESTree.ClassDeclaration | TSESTree.ClassExpression, frame: Frame): Value {
    const known = this.classes.get(node);
    if (known) return known;
    this.classes.set(node, NOTHING);
    const parent = node.superClass ? this.eval(node.superClass, frame).klass : undefined;
    if (parent) this.superclasses.set(node, parent as Node);
    const constructor = node.body.body.find((member): member is TSESTree.MethodDefinition => member.type === 'MethodDefinition' && member.kind === 'constructor');
    const statics = new Map<string, Value>();
    for (const member of node.body.body) {
      if ((member.type === 'MethodDefinition' || member.type === 'PropertyDefinition') && member.static && member.value?.type === 'FunctionExpression') {
        const key = staticKey(member, () => NOTHING);
        if (key) statics.set(key, functionValue(member.value));
      }
    }
    const value: Value = { fns: constructor?.value.type === 'FunctionExpression' ? [constructor.value] : undefined, klass: node, props: statics };
    this.classes.set(node, value);
    return value;
  }

  /** The value `this` has in a class's methods or a constructor function's body: the methods are its members. */
  private instanceOf(klass: object): Value {
    const known = this.instances.get(klass);
    if (known) return known;
    const props = new Map<string, Value>();
    const instance: Value = { props };
    this.instances.set(klass, instance);
    if (isNode(klass) && (klass.type === 'ClassDeclaration' || klass.type === 'ClassExpression')) {
      const parent = this.superclasses.get(klass);
      if (parent && parent !== klass) for (const [key, value] of this.instanceOf(parent).props ?? []) props.set(key, value);
      for (const member of klass.body.body) {
        if ((member.type !== 'MethodDefinition' && member.type !== 'PropertyDefinition') || member.static) continue;
        const key = staticKey(member, () => NOTHING);
        const value = member.value;
        if (!key || !value) continue;
        if (value.type === 'FunctionExpression' || value.type === 'ArrowFunctionExpression') {
          if (value.type === 'ArrowFunctionExpression') this.capturedThis.set(value, instance);
          props.set(key, functionValue(value));
        }
      }
    }
    return instance;
  }

  private text(node: Node, frame: Frame): string {
    const text = frame.module.parsed.text.slice(node.range[0], node.range[1]).replace(/\s+/g, ' ');
    return text.length > 60 ? `${text.slice(0, 57)}...` : text;
  }
}

// ---- helpers -----------------------------------------------------------------------------------

/** A value the engine knows nothing about: no members, module, taint or role. */
function isOpaque(value: Value): boolean {
  return !value.props && !value.module && !value.taint && !value.request && !value.response && !value.fns;
}

/** Functions that are methods or named members: class methods, `this.x = …`, `exports.x = …`, object members, declarations. */
function methodsByName(functions: readonly FunctionNode[]): Map<string, FunctionNode[]> {
  const methods = new Map<string, FunctionNode[]>();
  for (const fn of functions) {
    const parent = fn.parent;
    const named = fn.type === 'FunctionDeclaration' || parent.type === 'MethodDefinition' || parent.type === 'Property' || parent.type === 'PropertyDefinition' || (parent.type === 'AssignmentExpression' && parent.left.type === 'MemberExpression');
    const name = named ? functionName(fn) : 'function';
    if (name !== 'function') methods.set(name, [...(methods.get(name) ?? []), fn]);
  }
  return methods;
}

/** Members of a template model that hold request data, three levels deep at most. */
function taintedMembers(model: Value, prefix: string, depth: number): Array<{ path: string; taint: Taint }> {
  const found: Array<{ path: string; taint: Taint }> = [];
  for (const [key, value] of model.props ?? []) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (value.taint && !value.taint.param) found.push({ path, taint: value.taint });
    else if (value.props && depth < 2) found.push(...taintedMembers(value, path, depth + 1));
  }
  return found;
}

function functionValue(fn: FunctionNode): Value {
  return { fns: [fn], klass: fn.type === 'ArrowFunctionExpression' ? undefined : fn };
}

function exportsProps(module: ModuleState): Map<string, Value> {
  if (!module.exports.props) module.exports = { ...module.exports, props: new Map() };
  return module.exports.props as Map<string, Value>;
}

/** A name no declaration of the file binds. ESLint declares the built-in globals (eval, RegExp, JSON …) as variables without definitions. */
function isGlobal(identifier: TSESTree.Identifier, frame: Frame): boolean {
  const variable = frame.module.variables.get(identifier);
  return !variable || variable.defs.length === 0;
}

function isExportsObject(node: Node, frame: Frame): boolean {
  if (node.type === 'Identifier') return node.name === 'exports' && isGlobal(node, frame);
  return node.type === 'MemberExpression' && node.object.type === 'Identifier' && node.object.name === 'module' && propertyName(node) === 'exports' && isGlobal(node.object, frame);
}

function sameStep(a: Step, b: Step): boolean {
  return a.file === b.file && a.line === b.line && a.column === b.column;
}

/** A caller's path into a parameter, then the callee's path from that parameter. */
function compose(outer: Taint, inner: Taint): Taint {
  const steps = [...outer.steps, ...inner.steps];
  return { steps: steps.length > 40 ? [...steps.slice(0, 20), ...steps.slice(-20)] : steps, param: outer.param, raw: outer.raw && inner.raw, clean: new Set([...outer.clean, ...inner.clean]), browser: outer.browser };
}

/** `.replace(/[\r\n]/g, …)` strips line breaks (log injection); `.replace(/[.*+?…]/g, '\\$&')` escapes a pattern. */
function replaced(taint: Taint, args: readonly TSESTree.CallExpressionArgument[]): Taint {
  const [first, second] = args;
  const pattern = first?.type === 'Literal' && 'regex' in first ? first.regex.pattern : '';
  const replacement = second?.type === 'Literal' ? String(second.value) : '';
  const classes: SinkClass[] = [];
  if (/\\[rn]/.test(pattern)) classes.push('log-injection');
  if (replacement === '\\$&') classes.push('redos');
  if (/[<>]/.test(pattern) && /&(?:lt|gt|#)/.test(replacement)) classes.push('xss');
  return classes.length > 0 ? (cleaned(taint, classes) as Taint) : (derived(taint) as Taint);
}
