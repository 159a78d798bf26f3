import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import * as path from 'node:path';
import { AppConfig } from '../config/app-config';
import { ToolThreads } from './isolation/tool-threads';
import { ToolCatalogue, ToolRegistry } from './tool-registry';
import { createWorkspace } from './workspace';

/** Injection token of the sandboxed Workspace every tool context receives. */
export const WORKSPACE = Symbol('WORKSPACE');

@Module({
  imports: [DiscoveryModule],
  providers: [
    ToolRegistry,
    { provide: ToolCatalogue, useExisting: ToolRegistry },
    ToolThreads,
    {
      provide: WORKSPACE,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => createWorkspace(path.resolve(config.WORKSPACE_ROOT)),
    },
  ],
  exports: [ToolRegistry, ToolCatalogue, ToolThreads, WORKSPACE],
})
export class ToolsModule {}
