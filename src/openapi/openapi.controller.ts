import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Public } from '../identity/auth.decorators';
import { sendSnapshot } from '../common/http-cache';
import { OpenApiDocument } from './openapi-document';

@Controller()
@Public()
export class OpenApiController {
  constructor(private readonly document: OpenApiDocument) {}

  /** Public, like any API reference; If-None-Match with the ETag answers 304. */
  @Get('v1/openapi.json')
  openapi(@Res({ passthrough: true }) reply: FastifyReply) {
    return sendSnapshot(reply, this.document.snapshot);
  }
}
