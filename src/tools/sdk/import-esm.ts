import { pathToFileURL } from 'node:url';
import * as vm from 'node:vm';

/**
 * Some current client libraries ship only ES modules. Node >= 20.19 could `require()` them, but
 * Jest's module sandbox cannot, and TypeScript's CommonJS output turns a plain `import()` into
 * `require()`: so they are imported through Node's own ESM loader, from a script compiled outside
 * both, which works in the built service and under Jest (`--experimental-vm-modules`) alike.
 */
const importFromNode = new vm.Script('(url) => import(url)', {
  importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
}).runInThisContext() as (url: string) => Promise<unknown>;

/** An ES-module-only package (or an absolute path to a module file), loaded by Node's own loader. */
export function importEsm<T>(specifier: string): Promise<T> {
  return importFromNode(pathToFileURL(require.resolve(specifier)).href) as Promise<T>;
}
