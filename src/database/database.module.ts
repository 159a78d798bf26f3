import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/app-config';
import { DatabaseOutages } from '../common/outages';
import { buildDataSourceOptions } from './data-source-options';

/**
 * The one database connection, with the entities feature modules register; pending migrations run
 * before anything else starts. Global: every door that answers an outage reports it to DatabaseOutages.
 */
@Module({})
export class DatabaseModule {
  static forRoot(): DynamicModule {
    return {
      module: DatabaseModule,
      global: true,
      providers: [DatabaseOutages],
      exports: [DatabaseOutages],
      imports: [
        TypeOrmModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({ ...buildDataSourceOptions(config), autoLoadEntities: true, migrationsRun: true, retryAttempts: 5, retryDelay: 1000 }),
        }),
      ],
    };
  }
}
