import { Module } from '@nestjs/common';
import { loadToolClasses, loadToolModules } from '../src/tools/tool-loader';

/**
 * The built-in tools: every `@Tool` class in a `*.tool.ts` file below this folder, able to inject
 * what the `*.module.ts` files below it export (a family's integration clients).
 */
@Module({ imports: loadToolModules(__dirname), providers: loadToolClasses(__dirname) })
export class BuiltinToolsModule {}
