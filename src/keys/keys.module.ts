import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ToolsModule } from '../tools/tools.module';
import { Account } from './account.entity';
import { AccountsService } from './accounts.service';
import { ApiKey } from './api-key.entity';
import { ApiKeysService } from './api-keys.service';
import { KeyVerifier } from './key-verifier';
import { KeysController } from './keys.controller';

@Module({
  imports: [TypeOrmModule.forFeature([Account, ApiKey]), ToolsModule],
  controllers: [KeysController],
  providers: [AccountsService, ApiKeysService, KeyVerifier],
  exports: [AccountsService, ApiKeysService, KeyVerifier],
})
export class KeysModule {}
