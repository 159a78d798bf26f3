/**
 * README is an index into docs/: a page or section moved or renamed must not leave a link behind.
 * Every relative link of README.md and docs/*.md, and every `docs/<page>.md#anchor` a source
 * comment cites, must name a file that exists and, with `#anchor`, a heading of that file
 * (GitHub's anchors: lower case, punctuation dropped, spaces to dashes).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '..');
const PAGES = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

/** Lines outside ``` fences: a `# comment` in a shell example is not a heading. */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (line.startsWith('```')) fenced = !fenced;
    return !fenced && !line.startsWith('```');
  });
}

function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of prose(readFileSync(file, 'utf8'))) {
    const heading = /^#{1,6} (.*)$/.exec(line);
    if (!heading) continue;
    const slug = heading[1].trim().toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, '').replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
    seen.set(slug, count + 1);
  }
  return anchors;
}

/** `](target)` of every link outside code, skipping URLs with a scheme. */
function linksOf(file: string): string[] {
  const text = prose(readFileSync(file, 'utf8')).join('\n').replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]).filter((target) => !/^[a-z]+:/i.test(target));
}

/** The .ts files of the folders whose comments cite docs/ (dependencies and fixtures aside). */
function sources(): string[] {
  return ['src', 'tools', 'test', 'bench'].flatMap((dir) =>
    readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !/node_modules|fixtures/.test(entry.parentPath))
      .map((entry) => path.join(entry.parentPath, entry.name)),
  );
}

/** A link target that is not there: a missing file, or an anchor no heading of it makes. */
function broken(from: string, target: string): boolean {
  const [name, anchor] = target.split('#');
  const linked = name ? path.resolve(path.dirname(from), name) : from;
  if (!existsSync(linked)) return true;
  return anchor !== undefined && linked.endsWith('.md') && !anchorsOf(linked).has(anchor);
}

describe('documentation links', () => {
  it.each(PAGES)('%s links only to files and headings that exist', (page) => {
    const file = path.join(ROOT, page);
    expect(linksOf(file).filter((target) => broken(file, target))).toEqual([]);
  });

  it('cites only pages and headings of docs/ that exist in source comments', () => {
    const cited = sources().flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/\bdocs\/[\w-]+\.md(?:#[\w-]+)?/g)].map((match) => `${path.relative(ROOT, file)}: ${match[0]}`),
    );
    expect(cited.length).toBeGreaterThan(50);
    expect(cited.filter((citation) => broken(path.join(ROOT, 'README.md'), citation.split(': ')[1]))).toEqual([]);
  });
});
