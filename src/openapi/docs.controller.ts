import { Controller, Get, Header, Param, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Public } from '../identity/auth.decorators';
import { AppException } from '../common/errors';

/** Swagger UI's files, shipped by swagger-ui-dist and read once: the page needs nothing from the Internet. */
const UI_DIRECTORY = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Tool Orchestration Service API</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
</head>
<body>
  <div id="reference"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

/** validatorUrl null: the stock UI would ask validator.swagger.io for a badge. */
const INIT = `window.ui = SwaggerUIBundle({ url: '/v1/openapi.json', dom_id: '#reference', deepLinking: true, validatorUrl: null, tryItOutEnabled: false, persistAuthorization: false });\n`;

/** The browser may fetch only from this service: the page's policy says so besides the page itself. */
const CONTENT_SECURITY_POLICY = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'";

/** GET /docs: the API reference (Swagger UI) over /v1/openapi.json, served entirely by this service. */
@Controller('docs')
@Public()
export class DocsController {
  private readonly assets = new Map(Object.entries(ASSETS).map(([name, type]) => [name, { type, body: readFileSync(path.join(UI_DIRECTORY, name)) }]));

  @Get()
  @Header('content-type', 'text/html; charset=utf-8')
  @Header('content-security-policy', CONTENT_SECURITY_POLICY)
  page() {
    return PAGE;
  }

  @Get(':asset')
  asset(@Param('asset') name: string, @Res({ passthrough: true }) reply: FastifyReply) {
    if (name === 'init.js') {
      reply.header('content-type', 'text/javascript; charset=utf-8');
      return INIT;
    }
    const asset = this.assets.get(name);
    if (!asset) throw new AppException('NOT_FOUND', `No such documentation file: ${name}`);
    reply.header('content-type', asset.type).header('cache-control', 'public, max-age=86400');
    return asset.body;
  }
}
