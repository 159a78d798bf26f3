import { BadRequestException, ValidationError } from '@nestjs/common';
import compress from '@fastify/compress';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { FastifyRequest, LogController } from 'fastify';
import { AppModule, AppModuleOptions } from './app.module';
import { httpCacheHook } from './common/http-cache';
import { COMPRESSION_THRESHOLD_BYTES } from './common/encoded-json';
import { apiVersionHook } from './common/api-version';
import { AppException } from './common/errors';
import { installAsyncResourceBind } from './common/async-resource-bind';
import { checkJsonText } from './common/json-limits';
import { rememberRawBody } from './common/raw-body';
import { QueryRememberingValidationPipe } from './common/query-validation';
import { clientErrorHandler, frameworkErrorHandler, MAX_PATH_PARAM_LENGTH } from './common/framework-errors';
import { SECURITY_HEADERS } from './common/security-headers';
import { createRootLogger, PinoNestLogger } from './common/logger';
import { AppConfig } from './config/app-config';
import { installRequestObservability } from './observability/request-observability';
import { countedIn, writeRateLimitHeaders } from './common/rate-limit-headers';
import { ipWindowKey } from './limits/rate-limit-headers';
import { WINDOW_MS, WindowStore } from './limits/window-store';
import { installArchiveUploads } from './workspaces/archive-upload';
import { installLiveEndpoint } from './executions/live/live-endpoint';

export const BODY_LIMIT_BYTES = 1024 * 1024;
/** Methods whose requests carry no body by meaning: an empty one is fine under a JSON content type. */
const BODILESS_METHODS = new Set(['DELETE', 'GET', 'HEAD', 'OPTIONS']);
/** Idle connections close after 60 s (docs/API.md#headers). */
const IDLE_TIMEOUT_MS = 60_000;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Servers that stopped accepting: what they still answer closes its connection. */
const draining = new WeakSet<object>();

/**
 * SIGTERM's first step: stop accepting and answer the requests in flight. Each answer closes its
 * connection, since a kept-alive one would otherwise hold the close open for IDLE_TIMEOUT_MS.
 */
export async function drainHttp(app: NestFastifyApplication): Promise<void> {
  const fastify = app.getHttpAdapter().getInstance();
  draining.add(fastify);
  await fastify.close();
}

/** Builds the application exactly as `main.ts` serves it; e2e tests use the same function. */
export async function createApp(options: AppModuleOptions): Promise<NestFastifyApplication> {
  installAsyncResourceBind();
  const logger = createRootLogger(options.config.LOG_LEVEL);
  const adapter = new FastifyAdapter({
    ...tlsOptions(options.config),
    loggerInstance: logger,
    // One line per request, written by the onResponse hook below.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    bodyLimit: BODY_LIMIT_BYTES,
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    keepAliveTimeout: IDLE_TIMEOUT_MS,
    genReqId: (req: IncomingMessage) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(options), adapter, {
    logger: new PinoNestLogger(logger),
    abortOnError: false,
    // configureApp() installs the JSON parser (with the body checks) itself.
    bodyParser: false,
  });
  await configureApp(app);
  return app;
}

/**
 * With TLS_CERT and TLS_KEY: HTTPS, HTTP/2 negotiated by ALPN with HTTP/1.1 fallback, TLS 1.2 at
 * least (docs/operations.md#https-and-http2). Without: plain HTTP/1.1, for a TLS-terminating proxy in front.
 */
function tlsOptions(config: AppConfig): Record<string, unknown> {
  if (!config.TLS_CERT || !config.TLS_KEY) return {};
  return {
    http2: true,
    https: { allowHTTP1: true, minVersion: 'TLSv1.2', cert: readFileSync(config.TLS_CERT), key: readFileSync(config.TLS_KEY) },
  };
}

/** Everything between the socket and the controllers that is not a Nest provider. */
export async function configureApp(app: NestFastifyApplication): Promise<void> {
  app.useGlobalPipes(
    new QueryRememberingValidationPipe({
      transform: true,
      whitelist: true,
      stopAtFirstError: true,
      exceptionFactory: (errors) => validationException(errors),
    }),
  );
  if (app.get(AppConfig).runsApi) {
    // Loaded here, as ApiModule is (app.module.ts): a worker process never loads Swagger.
    const { OpenApiDocument } = await import('./openapi/openapi-document');
    app.get(OpenApiDocument).attach(app);
    installLiveEndpoint(app);
  }
  installRequestObservability(app);

  // Gzip answers over 1 KB when accepted; gzip/deflate request bodies are inflated as a stream, and the
  // 1 MiB body limit counts inflated bytes, so a compression bomb is cut off at 1 MiB (413).
  await app.register(compress, {
    global: true,
    threshold: COMPRESSION_THRESHOLD_BYTES,
    encodings: ['gzip', 'deflate'],
    requestEncodings: ['gzip', 'deflate'],
    onUnsupportedRequestEncoding: (encoding) =>
      new AppException('INVALID_REQUEST', `Unsupported Content-Encoding '${encoding}': send gzip, deflate or identity`, { status: 415 }),
    onInvalidRequestPayload: (encoding) => new AppException('INVALID_REQUEST', `The request body is not valid ${encoding} data`),
  });

  const fastify = app.getHttpAdapter().getInstance();
  // Bodies are JSON only (docs/API.md#request-bodies): Fastify's built-in text/plain parser would let others through.
  fastify.removeContentTypeParser('text/plain');
  installArchiveUploads(fastify, app.get(AppConfig).WORKSPACE_MAX_BYTES);
  // Depth, NUL and surrogate checks run on the text before it is parsed (src/common/json-limits.ts).
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser('application/json');
  // As bytes, kept for signed requests (src/common/raw-body.ts), then decoded as Fastify's string parsing does.
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, bytes, done) => {
    rememberRawBody(request, bytes as Buffer);
    const body = (bytes as Buffer).toString('utf8');
    // Clients send the JSON content type on every request, a DELETE too: with no body, there is nothing to parse.
    if (body === '' && BODILESS_METHODS.has(request.method)) {
      done(null, undefined);
      return;
    }
    try {
      checkJsonText(body);
    } catch (error) {
      done(error as Error, undefined);
      return;
    }
    parseJson(request, body, done);
  });
  // Workflow documents may be sent as YAML (docs/workflows.md#the-document); no other route takes it.
  fastify.addContentTypeParser(['application/yaml', 'application/x-yaml', 'text/yaml'], { parseAs: 'buffer' }, (request, bytes, done) => {
    if (!(request.routeOptions.url ?? '').startsWith('/v1/workflows')) {
      done(new AppException('INVALID_REQUEST', 'Only workflow documents may be sent as YAML; send JSON', { status: 415 }), undefined);
      return;
    }
    rememberRawBody(request, bytes as Buffer);
    done(null, (bytes as Buffer).toString('utf8'));
  });
  // PostgreSQL text refuses NUL: a path id holding one can name nothing, so it never reaches a query.
  fastify.addHook('preValidation', async (request) => {
    for (const [name, value] of Object.entries((request.params ?? {}) as Record<string, string>)) {
      if (value.includes('\0')) throw AppException.invalidRequest(`Invalid parameter '${name}': it holds a NUL character`, { parameter: name, expected: 'an identifier' });
    }
  });
  // Hooks, not interceptors: they also cover 404s and parser errors.
  fastify.addHook('onRequest', async (request, reply) => {
    reply.headers(SECURITY_HEADERS);
    reply.header('x-request-id', request.id);
  });
  fastify.addHook('onRequest', apiVersionHook);
  // The X-RateLimit-* headers of every response Fastify sends, errors included; those of a request no
  // limiter counted (unknown routes, public pages) show the client IP's window.
  const windows = app.get(WindowStore);
  const ipLimit = app.get(AppConfig).IP_RATE_LIMIT;
  fastify.addHook('onSend', httpCacheHook);
  fastify.addHook('onSend', async (request, reply, payload) => {
    if (draining.has(fastify) && request.raw.httpVersionMajor < 2) reply.header('connection', 'close'); // HTTP/2 has no such header
    return payload;
  });
  fastify.addHook('onSend', async (request, reply, payload) => {
    if (!request.rateLimit) {
      const state = await windows.peek(ipWindowKey(request), ipLimit, WINDOW_MS);
      countedIn(request, ipLimit, state.count, state.resetAt);
    }
    writeRateLimitHeaders(request, reply);
    return payload;
  });
  fastify.addHook('onResponse', async (request, reply) => {
    request.log.info(
      { method: request.method, path: routePath(request), status: reply.statusCode, duration_ms: Math.round(reply.elapsedTime * 100) / 100, key_id: request.principal?.keyId },
      'request',
    );
  });
}

function routePath(request: FastifyRequest): string {
  const q = request.url.indexOf('?');
  return q === -1 ? request.url : request.url.slice(0, q);
}

/** class-validator errors → INVALID_REQUEST naming the first bad parameter. */
function validationException(errors: ValidationError[]): AppException | BadRequestException {
  let error = errors[0];
  const path: string[] = [error.property];
  while (!error.constraints && error.children?.length) {
    error = error.children[0];
    path.push(error.property);
  }
  const parameter = path.join('.');
  const reason = Object.values(error.constraints ?? {})[0] ?? 'is invalid';
  return AppException.invalidRequest(`Invalid parameter '${parameter}': ${reason}`, { parameter });
}
