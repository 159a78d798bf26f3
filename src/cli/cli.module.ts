import { DynamicModule, Module } from '@nestjs/common';
import { BuiltinToolsModule } from '../../tools';
import { AppConfig } from '../config/app-config';
import { ConfigModule } from '../config/config.module';
import { DatabaseModule } from '../database/database.module';
import { KeysModule } from '../keys/keys.module';
import { SecretsModule } from '../secrets/secrets.module';
import { SessionsModule } from '../sessions/sessions.module';
import { loadExtensionModules } from '../tools/extension-modules';

/**
 * What the operator CLI needs: the database, the key, secret and console-session services, no HTTP;
 * and the service's tools (built-in and EXTENSION_MODULES), since a key names the tools it may use.
 */
@Module({})
export class CliModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: CliModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(),
        KeysModule,
        SecretsModule,
        SessionsModule,
        BuiltinToolsModule,
        ...loadExtensionModules(config.EXTENSION_MODULES),
      ],
    };
  }
}
