import { Module } from '@nestjs/common';
import { KeysModule } from '../../keys/keys.module';
import { ExecutionsModule } from '../executions.module';
import { LiveUpdates } from './live-updates';

/** One LiveUpdates per API process, shared by GET /v1/ws and MCP `subscriptions/listen` resource updates. */
@Module({
  imports: [ExecutionsModule, KeysModule],
  providers: [LiveUpdates],
  exports: [LiveUpdates],
})
export class LiveUpdatesModule {}
