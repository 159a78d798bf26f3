import { Module } from '@nestjs/common';
import { loadToolClasses } from '../src/tools/tool-loader';

/** The built-in tools: every `@Tool` class in a `*.tool.ts` file below this folder. */
@Module({ providers: loadToolClasses(__dirname) })
export class BuiltinToolsModule {}
