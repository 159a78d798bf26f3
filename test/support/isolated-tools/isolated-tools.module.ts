import { Module } from '@nestjs/common';
import { loadToolClasses } from '../../../src/tools/tool-loader';

/** Isolated test tools: loaded from their files, as a worker thread must load them again. */
@Module({ providers: loadToolClasses(__dirname) })
export class IsolatedTestToolsModule {}
