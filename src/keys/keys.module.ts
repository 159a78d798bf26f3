import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { openBroadcast } from '../redis/broadcast';
import { RedisConnections } from '../redis/redis-connections';
import { ToolsModule } from '../tools/tools.module';
import { Account } from './account.entity';
import { AccountsService } from './accounts.service';
import { ApiKey } from './api-key.entity';
import { ApiKeysService } from './api-keys.service';
import { KeyRevocations } from './key-revocations';

/** Accounts and their API keys; verifying a key is the Auth module's, told of revocations here. */
@Module({
  imports: [TypeOrmModule.forFeature([Account, ApiKey]), ToolsModule],
  providers: [
    AccountsService,
    ApiKeysService,
    { provide: KeyRevocations, inject: [RedisConnections], useFactory: (redis: RedisConnections) => new KeyRevocations(openBroadcast(redis, 'key-revocations')) },
  ],
  exports: [AccountsService, ApiKeysService, KeyRevocations],
})
export class KeysModule {}
