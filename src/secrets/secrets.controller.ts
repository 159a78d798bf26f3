import { Body, Controller, Delete, Get, HttpCode, Param, Put, Res } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { IsString, MaxLength, MinLength } from 'class-validator';
import type { FastifyReply } from 'fastify';
import { CurrentPrincipal, RequireScopes } from '../identity/auth.decorators';
import type { Principal } from '../identity/principal';
import { AppException } from '../common/errors';
import { SECRET_NAME } from './secret-name';
import { MAX_SECRETS_PER_ACCOUNT, SecretsService } from './secrets.service';

export class PutSecretDto {
  @ApiProperty({ minLength: 1, maxLength: 16_384, description: 'The value; write-only: no answer ever returns it.' })
  @IsString() @MinLength(1) @MaxLength(16_384)
  value: string;
}

/** The caller's account secrets, for tools to read through ctx.secrets (values are write-only). */
@Controller('v1/secrets')
@RequireScopes('secrets:manage')
export class SecretsController {
  constructor(private readonly secrets: SecretsService) {}

  /** 201 when it is new, 200 when it replaced a value. */
  @Put(':name')
  async put(@CurrentPrincipal() principal: Principal, @Param('name') name: string, @Body() body: PutSecretDto, @Res({ passthrough: true }) reply: FastifyReply) {
    const { created, ...view } = await this.secrets.set(principal.accountId, secretName(name), body.value);
    reply.status(created ? 201 : 200);
    return view;
  }

  @Get()
  async list(@CurrentPrincipal() principal: Principal) {
    const secrets = await this.secrets.list(principal.accountId);
    return { secrets, total: secrets.length, limit: MAX_SECRETS_PER_ACCOUNT };
  }

  @Delete(':name')
  @HttpCode(204)
  async delete(@CurrentPrincipal() principal: Principal, @Param('name') name: string): Promise<void> {
    await this.secrets.delete(principal.accountId, secretName(name));
  }
}

function secretName(name: string): string {
  if (!SECRET_NAME.test(name)) throw AppException.invalidRequest('A secret name is 1 to 64 letters, digits, _, . or -', { parameter: 'name', received: name.slice(0, 80) });
  return name;
}
