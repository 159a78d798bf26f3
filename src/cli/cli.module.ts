import { DynamicModule, Module } from '@nestjs/common';
import { BuiltinToolsModule } from '../../tools';
import { AppConfig } from '../config/app-config';
import { ConfigModule } from '../config/config.module';
import { DatabaseModule } from '../database/database.module';
import { KeysModule } from '../keys/keys.module';
import { RedisModule } from '../redis/redis.module';
import { SecretsModule } from '../secrets/secrets.module';
import { SessionsModule } from '../sessions/sessions.module';
import { loadExtensionModules } from '../tools/extension-modules';
import { UpstreamsModule } from '../upstreams/upstreams.module';

/**
 * What the operator CLI needs: the database, the key, secret and console-session services, no HTTP;
 * with `tools`, the service's tools too (built-in and EXTENSION_MODULES), for a command whose
 * tool ids the key service checks. Without them the catalogue is empty. With `upstreams`, the
 * upstreams service, for the operator's upstream commands.
 */
@Module({})
export class CliModule {
  static forRoot(config: AppConfig, tools: boolean, upstreams = false): DynamicModule {
    return {
      module: CliModule,
      imports: [
        ConfigModule.forRoot(config),
        RedisModule,
        DatabaseModule.forRoot(),
        KeysModule,
        SecretsModule,
        SessionsModule,
        ...(tools ? [BuiltinToolsModule, ...loadExtensionModules(config.EXTENSION_MODULES)] : []),
        ...(upstreams ? [UpstreamsModule] : []),
      ],
    };
  }
}
