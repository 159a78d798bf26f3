import { Module } from '@nestjs/common';
import { SessionsModule } from '../sessions/sessions.module';
import { ToolsModule } from '../tools/tools.module';
import { ConsoleAssets } from './console-assets';
import { ConsoleLinksController } from './console-links.controller';
import { ConsolePagesController } from './console-pages.controller';
import { ConsoleSessionController } from './console-session.controller';
import { ConsoleSsoController } from './console-sso.controller';
import { SingleSignOn } from './single-sign-on';

/**
 * The browser console (docs/console.md): its page and scripts, sign-in (links, or single sign-on) and sign-out, and sign-in links.
 * Everything else the page does goes through the /v1 API, as the session's principal. Part of the ApiModule.
 */
@Module({
  imports: [SessionsModule, ToolsModule],
  controllers: [ConsolePagesController, ConsoleSessionController, ConsoleSsoController, ConsoleLinksController],
  providers: [ConsoleAssets, SingleSignOn],
})
export class ConsoleModule {}
