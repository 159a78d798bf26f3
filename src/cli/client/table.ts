/**
 * Tables as the GitHub CLI prints them: a header, columns aligned with two spaces between, and on a
 * terminal the widest column cut (with …) until the row fits the window. Piped output is never cut.
 */

export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
  /** A column cut first when the row is too wide (descriptions, messages); ids are never cut. */
  flexible?: boolean;
}

const GAP = 2;
/** A flexible column is never cut below this: a stub of a word still says something. */
const MIN_FLEXIBLE = 8;

/** One line per cell: null shows as '-', dates keep their ISO form, arrays join with commas. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.map(cellText).join(',');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value).replace(/\s+/g, ' ').trim();
}

function cut(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1)).trimEnd()}…`;
}

/** The table as text; `width` is the terminal's (undefined: not a terminal, nothing is cut). */
export function renderTable<T>(rows: readonly T[], columns: readonly Column<T>[], width?: number): string {
  const cells = rows.map((row) => columns.map((column) => cellText(column.value(row))));
  const widths = columns.map((column, i) => Math.max(column.header.length, ...cells.map((line) => line[i].length)));
  if (width !== undefined) shrink(widths, columns, width);
  const line = (values: string[]) =>
    values
      .map((value, i) => (i === values.length - 1 ? cut(value, widths[i]) : cut(value, widths[i]).padEnd(widths[i])))
      .join(' '.repeat(GAP))
      .trimEnd();
  return [line(columns.map((c) => c.header.toUpperCase())), ...cells.map(line)].join('\n') + '\n';
}

/** Narrows the widest flexible column, one character at a time, until the row fits. */
function shrink(widths: number[], columns: readonly { flexible?: boolean }[], width: number): void {
  const total = () => widths.reduce((sum, w) => sum + w, 0) + GAP * (widths.length - 1);
  while (total() > width) {
    let widest = -1;
    columns.forEach((column, i) => {
      if (column.flexible && widths[i] > MIN_FLEXIBLE && (widest === -1 || widths[i] > widths[widest])) widest = i;
    });
    if (widest === -1) return;
    widths[widest] -= 1;
  }
}
