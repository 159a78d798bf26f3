import { cellText, renderTable } from './table';

const rows = [
  { id: 'secret-scan', status: 'ready', description: 'Finds credentials committed to a tree: keys, tokens, passwords, with their line.' },
  { id: 'dns-lookup', status: 'beta', description: null },
];
const columns = [
  { header: 'id', value: (r: (typeof rows)[number]) => r.id },
  { header: 'status', value: (r: (typeof rows)[number]) => r.status },
  { header: 'description', value: (r: (typeof rows)[number]) => r.description, flexible: true },
];

describe('renderTable', () => {
  it('aligns columns under upper-case headers and shows nothing as -', () => {
    expect(renderTable(rows, columns)).toMatchSnapshot();
  });

  it('cuts the flexible column with … so each line fits the terminal, and never cuts ids', () => {
    const text = renderTable(rows, columns, 40);
    for (const line of text.trimEnd().split('\n')) expect(line.length).toBeLessThanOrEqual(40);
    expect(text).toContain('secret-scan  ready   Finds credentials…');
    // Too narrow for the ids: they stay whole and the line runs over.
    expect(renderTable(rows, columns, 10)).toContain('secret-scan');
  });

  it('puts one line in a cell: whitespace folded, lists joined, objects as JSON', () => {
    expect(cellText('two\nlines')).toBe('two lines');
    expect(cellText(['a', 'b'])).toBe('a,b');
    expect(cellText([])).toBe('-');
    expect(cellText({ a: 1 })).toBe('{"a":1}');
  });
});
