/**
 * requirements.txt as `pip freeze` or pip-compile writes it: one pinned requirement per line
 * (`name[extras]==version ; marker  --hash=…`), with comments, continuations and options. Only
 * exact pins (`==`, `===`) name an installed version; anything else is listed as skipped.
 */
import type { SkippedEntry } from './model';
import { PackageSet } from './model';

const PINNED = /^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*===?\s*([^\s;,\\]+)\s*(?:;.*)?$/;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*/;

export function parseRequirements(text: string) {
  const packages = new PackageSet();
  const skipped: SkippedEntry[] = [];
  for (const line of logicalLines(text)) {
    if (line.startsWith('-')) {
      skipped.push({ entry: line, reason: 'pip option (included files and editable installs are not followed)' });
      continue;
    }
    const requirement = line.replace(/\s+--hash[=\s]\S+/g, '').trim();
    const pinned = PINNED.exec(requirement);
    if (pinned) {
      // A pin to a wildcard (`==1.*`) names no single version.
      if (pinned[2].includes('*')) skipped.push({ entry: requirement, reason: 'not pinned to one version' });
      else packages.add({ name: normalisePypiName(pinned[1]), version: pinned[2], direct: true, dev: false });
    } else if (NAME.test(requirement)) {
      skipped.push({ entry: requirement, reason: requirement.includes('@') ? 'a direct URL reference' : 'not pinned to one version' });
    }
  }
  return { project: { name: '' }, packages: packages.list(), skipped };
}

/** PEP 503 normal form: lower case, runs of `-`, `_`, `.` as one `-` (how PyPI and OSV name them). */
export function normalisePypiName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

/** Lines with comments removed and `\` continuations joined, blank ones dropped. */
function logicalLines(text: string): string[] {
  const joined = text.replace(/\\\r?\n/g, ' ');
  return joined
    .split(/\r?\n/)
    .map((line) => line.replace(/(^|\s)#.*$/, '').trim())
    .filter((line) => line.length > 0);
}
