import type { Type } from '@nestjs/common';
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import { exportedModules } from './extension-modules';
import { recordToolSource } from './isolation/tool-source';
import { ToolMetadata } from './sdk';

const TOOL_FILE = /\.tool\.(ts|js)$/;
const MODULE_FILE = /\.module\.(ts|js)$/;

/**
 * Every `@Tool` class exported by a `*.tool.ts` (or compiled `.js`) file under `dir`,
 * so adding a tool is adding one file: nothing else to edit.
 */
export function loadToolClasses(dir: string): Type[] {
  const classes: Type[] = [];
  for (const file of filesMatching(dir, TOOL_FILE)) {
    for (const [exportName, exported] of Object.entries(require(file) as Record<string, unknown>)) {
      if (typeof exported !== 'function' || !Reflect.hasOwnMetadata(ToolMetadata.KEY, exported)) continue;
      classes.push(exported as Type);
      recordToolSource(exported, { file, exportName });
    }
  }
  return classes;
}

/**
 * Every Nest module exported by a `*.module.ts` file under `dir`: the integration clients of a
 * tool family (one Octokit per token, one Docker client per host), which the folder's tools
 * inject in their constructors.
 */
export function loadToolModules(dir: string): Type[] {
  return filesMatching(dir, MODULE_FILE).flatMap((file) => exportedModules(require(file) as Record<string, unknown>));
}

function filesMatching(dir: string, pattern: RegExp): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && pattern.test(entry.name) && !entry.name.endsWith('.d.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
}
