/** A "try it" form generated from a tool's input schema: one labelled control per input. */
import { field, h } from './dom.js';

export interface InputSpec {
  type: string;
  required: boolean;
  description?: string;
  enum?: unknown[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
}

/** Strings this long or unbounded get a text area (manifests, code, logs). */
const SHORT_STRING = 200;

/** Reads one control's value; undefined leaves the input out (the tool's default applies). */
type Reader = () => unknown;

/** `initial` is the value the control starts with: the example's, else the input's default. */
function control(name: string, spec: InputSpec, initial: unknown): { element: HTMLElement; read: Reader } {
  if (spec.enum) {
    const select = h(
      'select',
      { name, required: spec.required },
      spec.required ? null : h('option', { value: '' }, '(not set)'),
      ...spec.enum.map((value) => h('option', { value: JSON.stringify(value), selected: JSON.stringify(value) === JSON.stringify(initial) }, String(value))),
    );
    return { element: select, read: () => (select.value === '' ? undefined : JSON.parse(select.value)) };
  }
  if (spec.type === 'boolean') {
    const box = h('input', { type: 'checkbox', name, checked: initial === true });
    return { element: box, read: () => (box.checked ? true : spec.required || spec.default !== undefined ? false : undefined) };
  }
  if (spec.type === 'integer' || spec.type === 'number') {
    const input = h('input', { type: 'number', name, required: spec.required, min: spec.minimum, max: spec.maximum, step: spec.type === 'integer' ? 1 : 'any', value: typeof initial === 'number' ? initial : undefined });
    return { element: input, read: () => (input.value === '' ? undefined : Number(input.value)) };
  }
  if (spec.type === 'string') {
    const long = spec.maxLength === undefined || spec.maxLength > SHORT_STRING;
    const input = long ? h('textarea', { name, required: spec.required, maxlength: spec.maxLength, rows: 3 }) : h('input', { type: 'text', name, required: spec.required, maxlength: spec.maxLength, autocomplete: 'off' });
    if (typeof initial === 'string') input.value = initial;
    return { element: input, read: () => (input.value === '' ? undefined : input.value) };
  }
  // Arrays, objects and anything else: JSON text.
  const area = h('textarea', { name, required: spec.required, rows: 4, spellcheck: 'false' });
  if (initial !== undefined) area.value = JSON.stringify(initial, null, 2);
  return {
    element: area,
    read: () => {
      area.setCustomValidity('');
      if (area.value.trim() === '') return undefined;
      try {
        return JSON.parse(area.value);
      } catch {
        area.setCustomValidity(`${name} must be JSON (${spec.type})`);
        throw new Error(`${name} is not valid JSON`);
      }
    },
  };
}

/** The form, filled in from `example` when given (the tool's first); `run` gets the inputs that were filled in. */
export function inputForm(toolName: string, inputs: Record<string, InputSpec>, run: (values: Record<string, unknown>) => Promise<void>, example?: { name: string; input: Record<string, unknown> }): HTMLFormElement {
  const readers: [string, Reader][] = [];
  const fields = Object.entries(inputs).map(([name, spec]) => {
    const { element, read } = control(name, spec, example && Object.hasOwn(example.input, name) ? example.input[name] : spec.default);
    readers.push([name, read]);
    const hint = [spec.type, spec.required ? 'required' : 'optional', spec.description].filter(Boolean).join(' · ');
    return field(name, element, hint);
  });
  const submit = h('button', { type: 'submit' }, 'Run');
  const form = h('form', { class: 'panel', 'aria-label': `Try ${toolName}` }, h('h2', {}, 'Try it'), example ? h('p', { class: 'hint' }, `Filled in from the example "${example.name}".`) : null, ...(fields.length ? fields : [h('p', {}, 'This tool takes no input.')]), submit);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    let values: Record<string, unknown>;
    try {
      values = Object.fromEntries(readers.map(([name, read]) => [name, read()]).filter(([, value]) => value !== undefined));
    } catch {
      form.reportValidity();
      return;
    }
    submit.disabled = true;
    void run(values).finally(() => (submit.disabled = false));
  });
  return form;
}
