/** Building DOM nodes from data: text always goes in as text, never as markup. */
export type Child = Node | string | number | null | undefined | false;
type AttrValue = string | number | boolean | null | undefined | ((event: Event) => void);

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, AttrValue> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.slice(2).toLowerCase(), value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child !== null && child !== undefined && child !== false) element.append(typeof child === 'number' ? String(child) : child);
  }
  return element;
}

let lastId = 0;
export function uniqueId(prefix: string): string {
  return `${prefix}-${++lastId}`;
}

/** A labelled control with an optional hint the control is described by. */
export function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  control.id ||= uniqueId('f');
  const hintElement = hint ? h('p', { class: 'hint', id: `${control.id}-hint` }, hint) : null;
  if (hintElement) control.setAttribute('aria-describedby', hintElement.id);
  return h('div', { class: 'field' }, h('label', { for: control.id }, label), control, hintElement);
}

/** A table with a caption and column headers; rows of cells. */
export function table(caption: string, headers: string[], rows: Child[][]): HTMLTableElement {
  return h(
    'table',
    {},
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, ...headers.map((header) => h('th', { scope: 'col' }, header)))),
    h('tbody', {}, ...rows.map((cells) => h('tr', {}, ...cells.map((cell) => h('td', {}, cell))))),
  );
}

export function when(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—';
}

/** `1 key`, `3 keys`. */
export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

export function json(value: unknown): HTMLPreElement {
  return h('pre', {}, JSON.stringify(value, null, 2));
}

/** Says something in the live region, which screen readers announce. */
export function notify(message: string, kind: 'ok' | 'error' = 'ok'): void {
  const region = document.getElementById('notice')!;
  region.replaceChildren(h('p', { class: kind === 'error' ? 'error' : undefined }, message));
}

export function clearNotice(): void {
  document.getElementById('notice')!.replaceChildren();
}
