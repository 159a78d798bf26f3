import type { Type } from '@nestjs/common';
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import { recordToolSource } from './isolation/tool-source';
import { ToolMetadata } from './sdk';

const TOOL_FILE = /\.tool\.(ts|js)$/;

/**
 * Every `@Tool` class exported by a `*.tool.ts` (or compiled `.js`) file under `dir`,
 * so adding a tool is adding one file: nothing else to edit.
 */
export function loadToolClasses(dir: string): Type[] {
  const classes: Type[] = [];
  for (const file of toolFiles(dir)) {
    for (const [exportName, exported] of Object.entries(require(file) as Record<string, unknown>)) {
      if (typeof exported !== 'function' || !Reflect.hasOwnMetadata(ToolMetadata.KEY, exported)) continue;
      classes.push(exported as Type);
      recordToolSource(exported, { file, exportName });
    }
  }
  return classes;
}

function toolFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && TOOL_FILE.test(entry.name) && !entry.name.endsWith('.d.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
}
