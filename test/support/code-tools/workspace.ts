/**
 * The workspace the code tools' examples and specs read: the fixture trees of tools/security and
 * tools/analysis copied under `code/`. Copying (not pointing at the repository) lets a fixture
 * hold an installed `node_modules`, which git ignores: fixtures name it `_node_modules`.
 */
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { ToolError, type Workspace } from '@tos/sdk';

const REPO = path.resolve(__dirname, '../../..');

/** Fixture folder → where it lands under `<root>/code/`. */
const TREES: ReadonlyArray<[string, string]> = [
  ['tools/security/fixtures/projects', ''],
  ['tools/security/fixtures/iac', 'iac'],
  ['tools/security/fixtures/sast', 'sast'],
  ['tools/analysis/fixtures/test-reports', 'reports'],
  ['tools/analysis/fixtures/quality', 'quality'],
];

/** OSV records of the fixtures, in OSV's bulk-export layout (read in place). */
export const FIXTURE_OSV_DIR = path.join(REPO, 'tools/security/fixtures/osv');

/** Fills `<root>/code/` with the fixture trees; returns the root. */
export function buildCodeWorkspace(root: string): string {
  for (const [from, to] of TREES) cpSync(path.join(REPO, from), path.join(root, 'code', to), { recursive: true });
  installModules(path.join(root, 'code'));
  return root;
}

function installModules(directory: string): void {
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const current = path.join(directory, entry.name);
    if (entry.name === '_node_modules') renameSync(current, path.join(directory, 'node_modules'));
    else installModules(current);
  }
}

/**
 * The part of ctx.workspace the lockfile readers use, over a directory, for unit specs of the
 * shared modules (tools get the real sandbox through runTool). A missing file is INVALID_INPUT,
 * as the sandbox reports it.
 */
export function directoryWorkspace(root: string): Pick<Workspace, 'root' | 'readText'> {
  return {
    root,
    async readText(relativePath, maxBytes, parameter = 'path') {
      const file = path.join(root, relativePath);
      if (!existsSync(file)) throw ToolError.invalidInput(parameter, 'an existing path in the workspace', relativePath);
      if (statSync(file).size > maxBytes) throw ToolError.invalidInput(parameter, `a file of at most ${maxBytes} bytes`, relativePath);
      return readFileSync(file, 'utf8');
    },
  };
}
