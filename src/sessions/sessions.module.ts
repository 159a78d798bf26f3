import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ConsoleLink } from './console-link.entity';
import { ConsoleSession } from './console-session.entity';
import { ConsoleSessions } from './console-sessions.service';

/** Console sign-in links and sessions; the auth guard verifies sessions, the console module opens them. */
@Module({
  imports: [TypeOrmModule.forFeature([ConsoleLink, ConsoleSession])],
  providers: [ConsoleSessions],
  exports: [ConsoleSessions],
})
export class SessionsModule {}
