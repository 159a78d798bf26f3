import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Account } from '../keys/account.entity';
import { LimitsModule } from '../limits/limits.module';
import { SessionsModule } from '../sessions/sessions.module';
import { ToolsModule } from '../tools/tools.module';
import { AuthorizationServer } from './authorization-server';
import { ConsentPage } from './consent-page';
import { OAuthGrantsController } from './oauth-grants.controller';
import { OAuthRecord } from './oauth-record.entity';

/** The built-in authorization server (OAUTH_BUILTIN) and the grants API (docs/authorization.md#the-built-in-authorization-server). */
@Module({
  imports: [TypeOrmModule.forFeature([OAuthRecord, Account]), SessionsModule, ToolsModule, LimitsModule],
  providers: [AuthorizationServer, ConsentPage],
  controllers: [OAuthGrantsController],
})
export class OAuthModule {}
