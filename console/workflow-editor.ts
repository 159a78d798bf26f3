/** A workflow document's text editor (YAML or JSON) that shows the server's validation problems beside the lines at fault. */
import { ApiError } from './api.js';
import { h, uniqueId } from './dom.js';

/** One problem of a 400 on save (docs/workflows.md#the-document): where, in which step, what. */
export interface DocumentProblem {
  path: string;
  step?: string;
  message: string;
  /** Known from the message itself (a YAML syntax error names its line). */
  line?: number;
}

export interface WorkflowEditor {
  element: HTMLElement;
  text(): string;
  setText(text: string): void;
  /** Shows the problems of a refused save (or the one error that has none), beside their lines. */
  showError(error: ApiError): void;
  clearProblems(): void;
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `steps[2].inputs.data` → the member named last, `data` (an index names no line). */
function lastMember(path: string): string | undefined {
  return path.split('.').pop()?.replace(/\[\d+\]$/, '') || undefined;
}

/**
 * The 1-based line a problem points at, found in the text as written (the server names paths in
 * the parsed document, not lines): the step's `id` line, then the first line after it that opens
 * the member at fault, before the next step begins. Unknown: undefined.
 */
export function lineOf(text: string, problem: DocumentProblem): number | undefined {
  const lines = text.split('\n');
  const member = lastMember(problem.path);
  const opens = (name: string) => new RegExp(`(^|[\\s{,"'])${escape(name)}["']?\\s*:`);
  if (problem.step === undefined) {
    if (!member) return undefined;
    const at = lines.findIndex((line) => opens(member).test(line));
    return at < 0 ? undefined : at + 1;
  }
  const declaresStep = new RegExp(`(^|[\\s{,"'-])id["']?\\s*:\\s*["']?${escape(problem.step)}["']?\\s*(,|}|$)`);
  const stepLine = lines.findIndex((line) => declaresStep.test(line));
  if (stepLine < 0) return undefined;
  const nextStep = lines.findIndex((line, index) => index > stepLine && /(^|[\s{,"'-])id["']?\s*:/.test(line));
  const end = nextStep < 0 ? lines.length : nextStep;
  if (member && member !== 'id') {
    for (let index = stepLine; index < end; index++) if (opens(member).test(lines[index])) return index + 1;
  }
  return stepLine + 1;
}

/** `steps[1].inputs.data` within step `sum` reads as `inputs.data`: the step is named beside it. */
function fieldOf(problem: DocumentProblem): string {
  return problem.step === undefined ? problem.path : problem.path.replace(/^steps\[\d+\]\.?/, '') || 'the step';
}

export function workflowEditor(label: string, initial: string): WorkflowEditor {
  const area = h('textarea', { class: 'code', rows: 24, spellcheck: 'false', wrap: 'off', autocomplete: 'off', 'aria-label': label });
  area.value = initial;
  const gutter = h('pre', { class: 'gutter', 'aria-hidden': 'true' });
  const problemsId = uniqueId('problems');
  const problems = h('div', { id: problemsId, 'aria-live': 'polite' });
  /** Problem lines, each with its messages: drawn in the gutter. */
  let marks = new Map<number, string[]>();

  const drawGutter = () => {
    const count = area.value.split('\n').length;
    gutter.replaceChildren(
      ...Array.from({ length: count }, (_, index) => {
        const messages = marks.get(index + 1);
        return h('span', { class: messages ? 'bad' : undefined, title: messages?.join('\n') }, `${messages ? '● ' : ''}${index + 1}\n`);
      }),
    );
    gutter.scrollTop = area.scrollTop;
  };
  area.addEventListener('input', drawGutter);
  area.addEventListener('scroll', () => (gutter.scrollTop = area.scrollTop));

  const goTo = (line: number) => {
    const lines = area.value.split('\n');
    const start = lines.slice(0, line - 1).reduce((sum, text) => sum + text.length + 1, 0);
    area.focus();
    area.setSelectionRange(start, start + lines[line - 1].length);
  };

  const clearProblems = () => {
    marks = new Map();
    area.removeAttribute('aria-invalid');
    area.removeAttribute('aria-describedby');
    problems.replaceChildren();
    drawGutter();
  };

  const showProblems = (list: DocumentProblem[], summary: string) => {
    marks = new Map();
    const text = area.value;
    const rows = list.map((problem) => {
      const line = problem.line ?? lineOf(text, problem);
      if (line !== undefined) marks.set(line, [...(marks.get(line) ?? []), problem.message]);
      return h(
        'li',
        { class: 'problem', 'data-step': problem.step, 'data-path': problem.path },
        line === undefined ? null : h('button', { type: 'button', class: 'link', onClick: () => goTo(line) }, `line ${line}`),
        problem.step === undefined ? null : h('span', { class: 'tag' }, `step ${problem.step}`),
        h('code', {}, fieldOf(problem)),
        ': ',
        h('span', { class: 'error-text' }, problem.message),
      );
    });
    area.setAttribute('aria-invalid', 'true');
    area.setAttribute('aria-describedby', problemsId);
    problems.replaceChildren(h('section', { class: 'problems', 'aria-label': 'Problems' }, h('p', {}, h('strong', {}, summary)), h('ul', {}, ...rows)));
    drawGutter();
  };

  drawGutter();
  return {
    element: h('div', {}, h('div', { class: 'editor' }, gutter, area), problems),
    text: () => area.value,
    setText: (text) => {
      area.value = text;
      clearProblems();
    },
    showError: (error) => {
      const list = error.details?.problems;
      if (Array.isArray(list) && list.length > 0) showProblems(list as DocumentProblem[], `The workflow was not saved: ${list.length === 1 ? '1 problem' : `${list.length} problems`}.`);
      else {
        // A document that does not parse: the YAML parser names the line in its message.
        const line = /at line (\d+)/.exec(error.message)?.[1];
        showProblems([{ path: String(error.details?.parameter ?? 'document'), message: error.message, ...(line && { line: Number(line) }) }], 'The workflow was not saved.');
      }
    },
    clearProblems,
  };
}
