/** A workflow run's steps drawn as a DAG in SVG: columns by depth (a step right of every step it needs), `needs` as arrows. */

export interface DagStep {
  id: string;
  tool: string;
  needs: string[];
  status: string;
  /** Where the node links to (its latest call's page), when it has one. */
  href?: string;
}

const NODE_WIDTH = 200;
const NODE_HEIGHT = 52;
const COLUMN_GAP = 56;
const ROW_GAP = 18;
const PADDING = 8;
/** Characters of a step id or tool name that fit a node's width. */
const LABEL_CHARS = 22;

const SVG = 'http://www.w3.org/2000/svg';

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number | undefined>, ...children: (Node | string)[]): SVGElementTagNameMap[K] {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) if (value !== undefined) element.setAttribute(name, String(value));
  element.append(...children);
  return element;
}

const clip = (text: string) => (text.length > LABEL_CHARS ? `${text.slice(0, LABEL_CHARS - 1)}…` : text);

/** Each step's column: 0 without needs, else one past the deepest step it needs (the server refused cycles). */
export function columnsOf(steps: readonly DagStep[]): Map<string, number> {
  const byId = new Map(steps.map((step) => [step.id, step]));
  const columns = new Map<string, number>();
  const columnOf = (step: DagStep): number => {
    const known = columns.get(step.id);
    if (known !== undefined) return known;
    const needed = step.needs.map((need) => byId.get(need)).filter((s): s is DagStep => s !== undefined);
    const column = needed.length === 0 ? 0 : 1 + Math.max(...needed.map(columnOf));
    columns.set(step.id, column);
    return column;
  };
  steps.forEach(columnOf);
  return columns;
}

/** The graph as an SVG element: a node per step (its id, tool and status, classed by status), an arrow per need. */
export function drawDag(steps: readonly DagStep[], label: string): SVGSVGElement {
  const columns = columnsOf(steps);
  const rowsUsed: number[] = [];
  const at = new Map<string, { x: number; y: number }>();
  for (const step of steps) {
    const column = columns.get(step.id)!;
    const row = (rowsUsed[column] = (rowsUsed[column] ?? 0) + 1) - 1;
    at.set(step.id, { x: PADDING + column * (NODE_WIDTH + COLUMN_GAP), y: PADDING + row * (NODE_HEIGHT + ROW_GAP) });
  }
  const width = 2 * PADDING + rowsUsed.length * (NODE_WIDTH + COLUMN_GAP) - COLUMN_GAP;
  const height = 2 * PADDING + Math.max(...rowsUsed) * (NODE_HEIGHT + ROW_GAP) - ROW_GAP;

  const arrow = svg('marker', { id: 'dag-arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 8, markerHeight: 8, orient: 'auto-start-reverse' }, svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'dag-arrow' }));
  const edges = steps.flatMap((step) =>
    step.needs
      .filter((need) => at.has(need))
      .map((need) => {
        const from = at.get(need)!;
        const to = at.get(step.id)!;
        const [x1, y1, x2, y2] = [from.x + NODE_WIDTH, from.y + NODE_HEIGHT / 2, to.x, to.y + NODE_HEIGHT / 2];
        const bend = COLUMN_GAP / 2;
        return svg('path', { class: 'dag-edge', 'data-from': need, 'data-to': step.id, d: `M ${x1} ${y1} C ${x1 + bend} ${y1}, ${x2 - bend} ${y2}, ${x2} ${y2}`, 'marker-end': 'url(#dag-arrow)' });
      }),
  );
  const nodes = steps.map((step) => {
    const { x, y } = at.get(step.id)!;
    const node = svg(
      'g',
      { class: `dag-node dag-${step.status}`, 'data-step': step.id, 'data-status': step.status, transform: `translate(${x} ${y})` },
      svg('title', {}, `${step.id} · ${step.tool} · ${step.status}`),
      svg('rect', { width: NODE_WIDTH, height: NODE_HEIGHT, rx: 6 }),
      svg('text', { x: 10, y: 20, class: 'dag-id' }, clip(step.id)),
      svg('text', { x: 10, y: 40, class: 'dag-detail' }, `${clip(step.tool)} · ${step.status}`),
    );
    return step.href ? svg('a', { href: step.href }, node) : node;
  });
  return svg('svg', { class: 'dag', role: 'img', 'aria-label': label, width, height, viewBox: `0 0 ${width} ${height}` }, svg('defs', {}, arrow), ...edges, ...nodes);
}
