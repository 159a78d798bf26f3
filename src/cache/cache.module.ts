import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { perConfig } from '../config/per-config';
import { ToolsModule } from '../tools/tools.module';
import { CacheController } from './cache.controller';
import { RedisResultCache } from './redis-result-cache';
import { MemoryResultCache, ResultCache } from './result-cache';

/** The result cache: in memory, or in Redis shared by all API processes when REDIS_URL is set. */
@Module({})
export class CacheModule {
  static readonly forRoot = perConfig((config: AppConfig): DynamicModule => {
    return {
      module: CacheModule,
      imports: [ToolsModule],
      controllers: config.runsApi ? [CacheController] : [],
      providers: [
        { provide: ResultCache, useFactory: () => (config.REDIS_URL ? new RedisResultCache(config.REDIS_URL, config.QUEUE_PREFIX) : new MemoryResultCache()) },
      ],
      exports: [ResultCache],
    };
  });
}
