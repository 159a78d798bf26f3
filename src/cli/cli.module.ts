import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { ConfigModule } from '../config/config.module';
import { DatabaseModule } from '../database/database.module';
import { KeysModule } from '../keys/keys.module';
import { SecretsModule } from '../secrets/secrets.module';

/** What the operator CLI needs: the database and the key services, no HTTP. */
@Module({})
export class CliModule {
  static forRoot(config: AppConfig): DynamicModule {
    return { module: CliModule, imports: [ConfigModule.forRoot(config), DatabaseModule.forRoot(), KeysModule, SecretsModule] };
  }
}
