import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { KeysModule } from '../keys/keys.module';
import { SecretsModule } from '../secrets/secrets.module';
import { SessionsModule } from '../sessions/sessions.module';
import { OperatorEndpoint } from './operator-endpoint';

/**
 * The operator endpoint, in embedded mode only: there the service holds the data directory, so
 * operator commands must go through it. With DATABASE_URL they open the database themselves.
 */
@Module({})
export class OperatorModule {
  static forRoot(config: AppConfig): DynamicModule {
    return { module: OperatorModule, imports: [KeysModule, SecretsModule, SessionsModule], providers: config.DATABASE_URL ? [] : [OperatorEndpoint] };
  }
}
