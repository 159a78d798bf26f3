import { pathToFileURL } from 'node:url';
import * as vm from 'node:vm';
import type { Octokit as OctokitInstance } from '@octokit/rest';

export type { OctokitInstance };
export type OctokitClass = typeof import('@octokit/rest').Octokit;

/**
 * `@octokit/rest` 22 ships only ES modules. Node >= 20.19 could `require()` it, but Jest's module
 * sandbox cannot, and TypeScript's CommonJS output turns a plain `import()` into `require()`: so
 * it is imported through Node's own ESM loader, from a script compiled outside both, which works
 * in the built service and under Jest (`--experimental-vm-modules`) alike.
 */
const importEsm = new vm.Script('(url) => import(url)', {
  importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
}).runInThisContext() as (url: string) => Promise<unknown>;

let loaded: Promise<OctokitClass> | undefined;

/** The Octokit class, loaded once per process. */
export function loadOctokit(): Promise<OctokitClass> {
  loaded ??= (importEsm(pathToFileURL(require.resolve('@octokit/rest')).href) as Promise<{ Octokit: OctokitClass }>).then((module) => module.Octokit);
  return loaded;
}
