import { pathToFileURL } from 'node:url';
import * as vm from 'node:vm';

const importFromNode = new vm.Script('(url) => import(url)', {
  importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
}).runInThisContext() as (url: string) => Promise<unknown>;

/** An ESM-only package through Node's own loader (Jest's module sandbox cannot import it). */
export function importEsm<T>(specifier: string): Promise<T> {
  return importFromNode(pathToFileURL(require.resolve(specifier)).href) as Promise<T>;
}
