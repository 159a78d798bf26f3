import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiResponse } from '@nestjs/swagger';
import { AppException } from '../../common/errors';
import { RequireScopes } from '../../identity/auth.decorators';

/**
 * GET /v1/ws as plain HTTP: the WebSocket itself is served before routing (live-endpoint.ts); a
 * request without `Upgrade: websocket` lands here, and the OpenAPI document lists the endpoint.
 */
@Controller('v1/ws')
export class LiveUpdatesController {
  @Get()
  @RequireScopes('executions:read')
  @ApiOperation({
    summary: 'Live execution updates (WebSocket)',
    description:
      'Connect with `Upgrade: websocket` and the key in `Authorization: Bearer`, or send `{"type":"auth","key":"…"}` first (browsers). ' +
      'Subscribe with `{"type":"subscribe","execution_id"|"tool_id"|"all":…,"after"?:seq}`; events arrive as `{"type":"event","seq",…}`. ' +
      'The protocol, close codes and resume: docs/executions.md#live-updates-over-websocket. Without the upgrade: 426.',
  })
  @ApiResponse({ status: 426, description: 'UPGRADE_REQUIRED: connect as a WebSocket' })
  upgradeRequired(): never {
    throw new AppException('INVALID_REQUEST', '/v1/ws is a WebSocket: connect with Upgrade: websocket (docs/executions.md#live-updates-over-websocket)', { status: 426 });
  }
}
