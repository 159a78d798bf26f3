import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ToolsModule } from '../tools/tools.module';
import { Account } from './account.entity';
import { AccountsService } from './accounts.service';
import { ApiKey } from './api-key.entity';
import { ApiKeysService } from './api-keys.service';
import { openBroadcast } from '../common/broadcast';
import { KeyRevocations } from './key-revocations';
import { KeyVerifier } from './key-verifier';
import { AppConfig } from '../config/app-config';
import { KeysController } from './keys.controller';

@Module({
  imports: [TypeOrmModule.forFeature([Account, ApiKey]), ToolsModule],
  controllers: [KeysController],
  providers: [
    AccountsService,
    ApiKeysService,
    KeyVerifier,
    {
      provide: KeyRevocations,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => new KeyRevocations(openBroadcast(config.REDIS_URL, `${config.QUEUE_PREFIX}:key-revocations`)),
    },
  ],
  exports: [AccountsService, ApiKeysService, KeyVerifier],
})
export class KeysModule {}
