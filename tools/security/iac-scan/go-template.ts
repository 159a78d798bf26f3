/**
 * The part of Go's text/template that Helm charts use: actions with whitespace trimming,
 * pipelines, variables, if/else if/with/range/define/template/block, and the functions of
 * ./functions.ts. Enough to render a chart with its default values for scanning; not a full
 * implementation (no break/continue, no methods beyond the ones the context provides).
 */
import { MAX_TEMPLATE_STEPS } from './limits';

type Node =
  | { type: 'text'; text: string; line: number }
  | { type: 'action'; pipe: Pipeline; line: number }
  | { type: 'if' | 'with'; pipe: Pipeline; then: Node[]; otherwise: Node[] }
  | { type: 'range'; pipe: Pipeline; then: Node[]; otherwise: Node[] }
  | { type: 'template'; name: string; pipe?: Pipeline; line: number };

interface Pipeline {
  declare: string[];
  assign: boolean;
  commands: Operand[][];
}

type Operand =
  | { kind: 'literal'; value: unknown }
  | { kind: 'field'; root: 'dot' | string; path: string[] }
  | { kind: 'function'; name: string }
  | { kind: 'pipe'; pipe: Pipeline; path: string[] };

export class TemplateError extends Error {}

export type TemplateFunction = (this: Renderer, ...args: unknown[]) => unknown;

/** Named templates (`define`) shared by every file of a chart, and the functions the templates call. */
export class Renderer {
  private readonly templates = new Map<string, Node[]>();
  private steps = 0;
  private depth = 0;

  constructor(private readonly functions: Readonly<Record<string, TemplateFunction>>) {}

  /** Parses a file: its `define`s join the shared set; returns its top-level nodes. */
  parse(text: string, name: string): Node[] {
    const parser = new Parser(tokenize(text, name), name);
    const nodes = parser.parseList([]);
    for (const [defined, body] of parser.defines) this.templates.set(defined, body);
    return nodes;
  }

  /**
   * Renders a file's nodes. `lines[k]` is the line of the template that wrote line k + 1 of the
   * text: a text line maps to itself, what an action wrote (an include, toYaml) to the action.
   */
  execute(nodes: Node[], dot: unknown): { text: string; lines: number[] } {
    this.steps = 0;
    return unmark(this.run(nodes, dot, new Scope(dot)));
  }

  /** `include "name" dot` and `template "name" dot`. */
  include(name: string, dot: unknown): string {
    const nodes = this.templates.get(name);
    if (!nodes) throw new TemplateError(`no template "${name}"`);
    if (++this.depth > 100) throw new TemplateError(`include "${name}" nested over 100 deep`);
    try {
      return this.run(nodes, dot, new Scope(dot));
    } finally {
      this.depth -= 1;
    }
  }

  /** `tpl "string" dot`: renders a string as a template with the chart's defines. */
  renderString(text: string, dot: unknown): string {
    this.depth += 1;
    try {
      return this.run(this.parse(text, 'tpl'), dot, new Scope(dot));
    } finally {
      this.depth -= 1;
    }
  }

  /** Where output comes from, written into the file's own output only (not into what include returns). */
  private mark(kind: 'T' | 'A', line: number): string {
    return this.depth === 0 ? `${MARK}${kind}${line}${END_MARK}` : '';
  }

  private tick(): void {
    if (++this.steps > MAX_TEMPLATE_STEPS) throw new TemplateError(`stopped after ${MAX_TEMPLATE_STEPS} steps`);
  }

  private run(nodes: Node[], dot: unknown, scope: Scope): string {
    let out = '';
    for (const node of nodes) {
      this.tick();
      switch (node.type) {
        case 'text':
          out += this.mark('T', node.line) + node.text;
          break;
        case 'action': {
          const value = this.pipeline(node.pipe, dot, scope);
          if (node.pipe.declare.length === 0) out += this.mark('A', node.line) + printed(value);
          break;
        }
        case 'if':
        case 'with': {
          const inner = scope.child();
          const value = this.pipeline(node.pipe, dot, inner);
          if (truthy(value)) out += this.run(node.then, node.type === 'with' ? value : dot, inner);
          else out += this.run(node.otherwise, dot, scope.child());
          break;
        }
        case 'range': {
          const inner = scope.child();
          const value = this.pipeline({ ...node.pipe, declare: [] }, dot, inner);
          const entries: Array<[unknown, unknown]> = Array.isArray(value)
            ? value.map((item, index) => [index, item])
            : value && typeof value === 'object'
              ? Object.keys(value).sort().map((key) => [key, (value as Record<string, unknown>)[key]])
              : typeof value === 'number'
                ? Array.from({ length: value }, (_, index) => [index, index])
                : [];
          if (entries.length === 0) out += this.run(node.otherwise, dot, scope.child());
          for (const [key, item] of entries) {
            const [first, second] = node.pipe.declare;
            if (second !== undefined) inner.declare(first, key), inner.declare(second, item);
            else if (first !== undefined) inner.declare(first, item);
            out += this.run(node.then, item, inner);
          }
          break;
        }
        case 'template':
          out += this.mark('A', node.line) + this.include(node.name, node.pipe ? this.pipeline(node.pipe, dot, scope) : undefined);
          break;
      }
      if (out.length > 16 * 1024 * 1024) throw new TemplateError('output over 16 MiB');
    }
    return out;
  }

  private pipeline(pipe: Pipeline, dot: unknown, scope: Scope): unknown {
    let value: unknown;
    let first = true;
    for (const command of pipe.commands) {
      value = this.command(command, dot, scope, first ? [] : [value]);
      first = false;
    }
    for (const name of pipe.declare) (pipe.assign ? scope.assign(name, value) : scope.declare(name, value));
    return value;
  }

  private command(operands: Operand[], dot: unknown, scope: Scope, piped: unknown[]): unknown {
    this.tick();
    const [head, ...rest] = operands;
    const args = () => [...rest.map((operand) => this.operand(operand, dot, scope)), ...piped];
    if (head.kind === 'function') {
      if (head.name === 'and' || head.name === 'or') return this.logical(head.name, rest, dot, scope, piped);
      const fn = this.functions[head.name];
      if (!fn) throw new TemplateError(`function "${head.name}" not defined`);
      return fn.apply(this, args());
    }
    const value = this.operand(head, dot, scope);
    if (typeof value === 'function') return (value as (...all: unknown[]) => unknown)(...args());
    if (rest.length > 0 || piped.length > 0) throw new TemplateError('arguments given to a value that is not a function');
    return value;
  }

  /** `and`/`or` stop at the first deciding argument, as Go's do. */
  private logical(name: 'and' | 'or', operands: Operand[], dot: unknown, scope: Scope, piped: unknown[]): unknown {
    let value: unknown;
    for (const next of [...operands.map((operand) => () => this.operand(operand, dot, scope)), ...piped.map((item) => () => item)]) {
      value = next();
      if (truthy(value) === (name === 'or')) return value;
    }
    return value;
  }

  private operand(operand: Operand, dot: unknown, scope: Scope): unknown {
    switch (operand.kind) {
      case 'literal':
        return operand.value;
      case 'function': {
        const fn = this.functions[operand.name];
        if (!fn) throw new TemplateError(`function "${operand.name}" not defined`);
        return fn.apply(this, []);
      }
      case 'field':
        return fieldOf(operand.root === 'dot' ? dot : scope.get(operand.root), operand.path);
      case 'pipe':
        return fieldOf(this.pipeline(operand.pipe, dot, scope.child()), operand.path);
    }
  }
}

class Scope {
  private readonly variables = new Map<string, unknown>();

  constructor(root: unknown, private readonly parent?: Scope) {
    if (!parent) this.variables.set('$', root);
  }

  child(): Scope {
    return new Scope(undefined, this);
  }

  declare(name: string, value: unknown): void {
    this.variables.set(name, value);
  }

  assign(name: string, value: unknown): void {
    if (this.variables.has(name) || !this.parent) this.variables.set(name, value);
    else this.parent.assign(name, value);
  }

  get(name: string): unknown {
    if (this.variables.has(name)) return this.variables.get(name);
    if (this.parent) return this.parent.get(name);
    throw new TemplateError(`undefined variable "${name}"`);
  }
}

function fieldOf(value: unknown, path: string[]): unknown {
  let current = value;
  for (const name of path) {
    if (current === null || current === undefined) return undefined;
    if (typeof current !== 'object') throw new TemplateError(`can't evaluate field ${name} in type ${typeof current}`);
    current = Object.hasOwn(current, name) ? (current as Record<string, unknown>)[name] : undefined;
  }
  return current;
}

/** Go's truth: false, 0, nil, and empty strings, lists and maps are false. */
export function truthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

/** How a value prints into the output: Helm shows a missing value as nothing. */
export function printed(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map(printed).join(' ')}]`;
  if (typeof value === 'object') return `map[${Object.keys(value).sort().map((key) => `${key}:${printed((value as Record<string, unknown>)[key])}`).join(' ')}]`;
  return String(value);
}

// ---- lexing -------------------------------------------------------------------------------

type Token = { type: 'text'; text: string; line: number } | { type: 'action'; words: Word[]; line: number };
/** `glued`: a field written right after `)`, which reads a field of the parenthesised result. */
type Word = { kind: 'string' | 'number' | 'ident' | 'field' | 'variable' | 'punct'; text: string; value?: unknown; glued?: boolean };

function tokenize(source: string, name: string): Token[] {
  const text = source.replaceAll(MARK, '').replaceAll(END_MARK, '');
  const lineAt = lineFinder(text);
  const tokens: Token[] = [];
  let at = 0;
  let trimNext = false;
  while (at < text.length) {
    const open = text.indexOf('{{', at);
    let chunk = text.slice(at, open === -1 ? text.length : open);
    const untrimmed = chunk.length;
    if (trimNext) chunk = chunk.replace(/^\s+/, '');
    const line = lineAt(at + untrimmed - chunk.length);
    if (open === -1) {
      tokens.push({ type: 'text', text: chunk, line });
      break;
    }
    const trimLeft = /^\{\{-[\s]/.test(text.slice(open, open + 4));
    if (trimLeft) chunk = chunk.replace(/\s+$/, '');
    tokens.push({ type: 'text', text: chunk, line });
    const start = open + (trimLeft ? 3 : 2);
    const { end, words } = lexAction(text, start, name);
    trimNext = /\s-$/.test(text.slice(end - 2, end));
    const closeAt = end + 2;
    if (words.length > 0) tokens.push({ type: 'action', words, line: lineAt(open) });
    at = closeAt;
  }
  return tokens;
}

/** 1-based line of an offset, by binary search over the offsets of the newlines. */
function lineFinder(text: string): (offset: number) => number {
  const newlines: number[] = [];
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) newlines.push(at);
  return (offset) => {
    let low = 0;
    let high = newlines.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (newlines[middle] < offset) low = middle + 1;
      else high = middle;
    }
    return low + 1;
  };
}

/** Markers the file's own output carries until execute() turns them into line numbers. */
const MARK = '\u0000';
const END_MARK = '\u0001';

function unmark(marked: string): { text: string; lines: number[] } {
  let text = '';
  const lines: number[] = [];
  let source = 1;
  let fromText = true;
  let lineStarted = false;
  for (let at = 0; at < marked.length; at += 1) {
    const char = marked[at];
    if (char === MARK) {
      const end = marked.indexOf(END_MARK, at);
      fromText = marked[at + 1] === 'T';
      source = Number(marked.slice(at + 2, end));
      at = end;
      continue;
    }
    if (!lineStarted) lines.push(source), (lineStarted = true);
    text += char;
    if (char === '\n') {
      lineStarted = false;
      if (fromText) source += 1;
    }
  }
  if (!lineStarted) lines.push(source);
  return { text, lines };
}

/** The words of one action from `start` to its `}}` (whose index is returned as `end`). */
function lexAction(text: string, start: number, name: string): { end: number; words: Word[] } {
  const words: Word[] = [];
  let at = start;
  while (at < text.length) {
    const char = text[at];
    if (text.startsWith('}}', at)) return { end: at, words: words.length > 0 && words[words.length - 1].text === '-' ? words.slice(0, -1) : words };
    if (/\s/.test(char)) {
      at += 1;
      continue;
    }
    if (text.startsWith('/*', at)) {
      const close = text.indexOf('*/', at + 2);
      if (close === -1) break;
      at = close + 2;
      continue;
    }
    if (char === '"') {
      let end = at + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      words.push({ kind: 'string', text: text.slice(at, end + 1), value: JSON.parse(text.slice(at, end + 1).replace(/\\'/g, "'")) });
      at = end + 1;
      continue;
    }
    if (char === '`') {
      const end = text.indexOf('`', at + 1);
      if (end === -1) break;
      words.push({ kind: 'string', text: text.slice(at, end + 1), value: text.slice(at + 1, end) });
      at = end + 1;
      continue;
    }
    const match = /^(?:-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|:=|[()|=,-]|\$\w*(?:\.\w+)*|\.(?:\w+(?:\.\w+)*)?|'(?:\\.|[^'])'|[A-Za-z_]\w*)/.exec(text.slice(at));
    if (!match) throw new TemplateError(`${name}: unexpected "${char}" in action`);
    const word = match[0];
    if (word.startsWith('$')) words.push({ kind: 'variable', text: word });
    else if (word.startsWith('.')) words.push({ kind: 'field', text: word, glued: text[at - 1] === ')' });
    else if (/^-?\d/.test(word)) words.push({ kind: 'number', text: word, value: Number(word) });
    else if (word.startsWith("'")) words.push({ kind: 'number', text: word, value: word.codePointAt(1) });
    else if (/^[A-Za-z_]/.test(word)) words.push({ kind: 'ident', text: word });
    else words.push({ kind: 'punct', text: word });
    at += word.length;
  }
  throw new TemplateError(`${name}: unclosed action`);
}

// ---- parsing ------------------------------------------------------------------------------

class Parser {
  readonly defines = new Map<string, Node[]>();
  private at = 0;

  constructor(private readonly tokens: Token[], private readonly name: string) {}

  /** Nodes up to one of `stops` (`end`, `else`), which is left unread. */
  parseList(stops: string[]): Node[] {
    const nodes: Node[] = [];
    while (this.at < this.tokens.length) {
      const token = this.tokens[this.at];
      if (token.type === 'text') {
        if (token.text) nodes.push({ type: 'text', text: token.text, line: token.line });
        this.at += 1;
        continue;
      }
      const keyword = token.words[0].kind === 'ident' ? token.words[0].text : '';
      if (stops.includes(keyword)) return nodes;
      this.at += 1;
      nodes.push(...this.control(keyword, token.words, token.line));
    }
    if (stops.length > 0) throw new TemplateError(`${this.name}: missing {{end}}`);
    return nodes;
  }

  private control(keyword: string, words: Word[], line: number): Node[] {
    switch (keyword) {
      case 'if':
      case 'with':
      case 'range':
        return [this.branch(keyword, words.slice(1))];
      case 'define':
      case 'block': {
        const templateName = words[1]?.value;
        if (typeof templateName !== 'string') throw new TemplateError(`${this.name}: ${keyword} needs a name`);
        const body = this.parseList(['end']);
        this.at += 1;
        this.defines.set(templateName, body);
        return keyword === 'block' ? [{ type: 'template', name: templateName, pipe: words.length > 2 ? pipelineOf(words.slice(2)) : undefined, line }] : [];
      }
      case 'template': {
        const templateName = words[1]?.value;
        if (typeof templateName !== 'string') throw new TemplateError(`${this.name}: template needs a name`);
        return [{ type: 'template', name: templateName, pipe: words.length > 2 ? pipelineOf(words.slice(2)) : undefined, line }];
      }
      case 'end':
      case 'else':
        throw new TemplateError(`${this.name}: unexpected {{${keyword}}}`);
      case 'break':
      case 'continue':
        throw new TemplateError(`${this.name}: {{${keyword}}} is not supported`);
      default:
        return [{ type: 'action', pipe: pipelineOf(words), line }];
    }
  }

  private branch(type: 'if' | 'with' | 'range', words: Word[]): Node {
    const pipe = pipelineOf(words);
    const then = this.parseList(['else', 'end']);
    const stop = this.tokens[this.at] as { type: 'action'; words: Word[] };
    this.at += 1;
    let otherwise: Node[] = [];
    if (stop.words[0].text === 'else') {
      // `{{else if …}}` / `{{else with …}}` open a nested branch that shares this one's {{end}}.
      if (stop.words.length > 1 && (stop.words[1].text === 'if' || stop.words[1].text === 'with')) return { type, pipe, then, otherwise: [this.branch(stop.words[1].text as 'if' | 'with', stop.words.slice(2))] } as Node;
      otherwise = this.parseList(['end']);
      this.at += 1;
    }
    return { type, pipe, then, otherwise } as Node;
  }
}

function pipelineOf(words: Word[]): Pipeline {
  let declare: string[] = [];
  let assign = false;
  const operator = words.findIndex((word) => word.text === ':=' || word.text === '=');
  if (operator > 0 && words.slice(0, operator).every((word) => word.kind === 'variable' || word.text === ',')) {
    declare = words.slice(0, operator).filter((word) => word.kind === 'variable').map((word) => word.text);
    assign = words[operator].text === '=';
    words = words.slice(operator + 1);
  }
  const commands: Operand[][] = [[]];
  for (let index = 0; index < words.length; index += 1) {
    const word = words[index];
    if (word.text === '|') {
      commands.push([]);
      continue;
    }
    if (word.text === '(') {
      let depth = 1;
      let close = index + 1;
      for (; close < words.length && depth > 0; close += 1) depth += words[close].text === '(' ? 1 : words[close].text === ')' ? -1 : 0;
      const inner = pipelineOf(words.slice(index + 1, close - 1));
      // `(…).Field` reads a field of the parenthesised result.
      const next = words[close];
      const path = next?.glued ? next.text.slice(1).split('.') : [];
      commands[commands.length - 1].push({ kind: 'pipe', pipe: inner, path });
      index = path.length > 0 ? close : close - 1;
      continue;
    }
    commands[commands.length - 1].push(operandOf(word));
  }
  if (commands.some((command) => command.length === 0)) throw new TemplateError('empty command in pipeline');
  return { declare, assign, commands };
}

function operandOf(word: Word): Operand {
  switch (word.kind) {
    case 'string':
    case 'number':
      return { kind: 'literal', value: word.value };
    case 'field':
      return { kind: 'field', root: 'dot', path: word.text === '.' ? [] : word.text.slice(1).split('.') };
    case 'variable': {
      const [root, ...path] = word.text.split('.');
      return { kind: 'field', root, path };
    }
    case 'ident':
      if (word.text === 'true' || word.text === 'false') return { kind: 'literal', value: word.text === 'true' };
      if (word.text === 'nil') return { kind: 'literal', value: null };
      return { kind: 'function', name: word.text };
    default:
      throw new TemplateError(`unexpected "${word.text}"`);
  }
}
