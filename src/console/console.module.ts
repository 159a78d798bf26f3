import { Module } from '@nestjs/common';
import { SessionsModule } from '../sessions/sessions.module';
import { ConsoleAssets } from './console-assets';
import { ConsoleLinksController } from './console-links.controller';
import { ConsolePagesController } from './console-pages.controller';
import { ConsoleSessionController } from './console-session.controller';

/**
 * The browser console (docs/console.md): its page and scripts, sign-in and sign-out, and sign-in links.
 * Everything else the page does goes through the /v1 API, as the session's principal. Part of the ApiModule.
 */
@Module({
  imports: [SessionsModule],
  controllers: [ConsolePagesController, ConsoleSessionController, ConsoleLinksController],
  providers: [ConsoleAssets],
})
export class ConsoleModule {}
