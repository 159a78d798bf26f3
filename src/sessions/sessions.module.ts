import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountMember } from './account-member.entity';
import { AccountMembers } from './account-members.service';
import { ConsoleLink } from './console-link.entity';
import { ConsoleSession } from './console-session.entity';
import { ConsoleSessions } from './console-sessions.service';

/** Console sign-in links and sessions, and the members single sign-on admits; the auth guard verifies sessions, the console module opens them. */
@Module({
  imports: [TypeOrmModule.forFeature([ConsoleLink, ConsoleSession, AccountMember])],
  providers: [ConsoleSessions, AccountMembers],
  exports: [ConsoleSessions, AccountMembers],
})
export class SessionsModule {}
