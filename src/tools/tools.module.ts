import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import * as path from 'node:path';
import { AppConfig } from '../config/app-config';
import { openBroadcast } from '../redis/broadcast';
import { RedisConnections } from '../redis/redis-connections';
import { CatalogueChanges } from './catalogue-changes';
import { EgressPool } from './egress/egress';
import { ToolThreads } from './isolation/tool-threads';
import { ProviderExplorer } from './provider-explorer';
import { KnownTools } from './known-tools';
import { RuntimeTools } from './runtime-tools';
import { ToolCompiler } from './tool-compiler';
import { ToolRegistry } from './tool-registry';
import { ToolCatalogue } from './tool-catalogue';
import { createWorkspace } from './workspace';

/** Injection token of the sandboxed Workspace every tool context receives. */
export const WORKSPACE = Symbol('WORKSPACE');

@Module({
  imports: [DiscoveryModule],
  providers: [
    EgressPool,
    ProviderExplorer,
    ToolCompiler,
    ToolRegistry,
    { provide: ToolCatalogue, useExisting: ToolRegistry },
    ToolThreads,
    RuntimeTools,
    KnownTools,
    { provide: CatalogueChanges, inject: [RedisConnections], useFactory: (redis: RedisConnections) => new CatalogueChanges(openBroadcast(redis, 'catalogue-changes')) },
    {
      provide: WORKSPACE,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => createWorkspace(path.resolve(config.WORKSPACE_ROOT)),
    },
  ],
  exports: [EgressPool, ToolRegistry, ToolCatalogue, ProviderExplorer, ToolThreads, RuntimeTools, KnownTools, CatalogueChanges, WORKSPACE],
})
export class ToolsModule {}
