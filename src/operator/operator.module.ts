import { Module } from '@nestjs/common';
import { KeysModule } from '../keys/keys.module';
import { SecretsModule } from '../secrets/secrets.module';
import { SessionsModule } from '../sessions/sessions.module';
import { UpstreamsModule } from '../upstreams/upstreams.module';
import { OperatorEndpoint } from './operator-endpoint';

/**
 * The operator endpoint, in embedded mode only (the root module decides): there the service holds
 * the data directory, so operator commands must go through it. With DATABASE_URL they open the
 * database themselves.
 */
@Module({ imports: [KeysModule, SecretsModule, SessionsModule, UpstreamsModule], providers: [OperatorEndpoint] })
export class OperatorModule {}
