import type { Type } from '@nestjs/common';
import { MODULE_METADATA } from '@nestjs/common/constants';
import * as path from 'node:path';
import { ConfigError } from '../config/app-config';

/** A class decorated with Nest's `@Module` (it carries module metadata). */
export function isNestModule(value: unknown): value is Type {
  return typeof value === 'function' && Object.values(MODULE_METADATA).some((key) => Reflect.hasOwnMetadata(key, value));
}

/** Every `@Module` class a loaded file or package exports. */
export function exportedModules(exports: Record<string, unknown>): Type[] {
  return [...new Set(Object.values(exports).filter(isNestModule))];
}

/**
 * EXTENSION_MODULES: npm package names or paths (relative to the working directory), each
 * exporting one or more Nest modules that boot beside the built-in tools. A specifier that does
 * not resolve, fails to load or exports no module stops start-up naming it.
 */
export function loadExtensionModules(specifiers: string, cwd = process.cwd()): Type[] {
  const modules: Type[] = [];
  for (const specifier of specifiers.split(',').map((s) => s.trim()).filter(Boolean)) {
    const local = specifier.startsWith('.') || path.isAbsolute(specifier);
    let resolved: string;
    try {
      resolved = require.resolve(local ? path.resolve(cwd, specifier) : specifier, { paths: [cwd] });
    } catch {
      throw new ConfigError(`EXTENSION_MODULES: '${specifier}' cannot be found (${local ? 'no such file or package directory' : `no package of that name from ${cwd}`})`);
    }
    let loaded: Record<string, unknown>;
    try {
      loaded = require(resolved) as Record<string, unknown>;
    } catch (err) {
      throw new ConfigError(`EXTENSION_MODULES: '${specifier}' failed to load: ${(err as Error).message}`);
    }
    const found = exportedModules(loaded);
    if (found.length === 0) throw new ConfigError(`EXTENSION_MODULES: '${specifier}' exports no Nest module (a class decorated with @Module)`);
    modules.push(...found);
  }
  return modules;
}
