import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { CurrentPrincipal, RequireScopes } from '../identity/auth.decorators';
import type { Principal } from '../identity/principal';
import { PageQuery } from '../common/pagination';
import { ApiKeysService, IssuedKey } from './api-keys.service';
import { CreateKeyDto, RotateKeyDto } from './dto/create-key.dto';
import { keyView } from './key-view';

/** Key management for the caller's own account (docs/API.md#keys). */
@Controller('v1/keys')
@RequireScopes('keys:manage')
export class KeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Post()
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateKeyDto) {
    const issued = await this.keys.create(
      principal.accountId,
      { name: body.name, type: body.keyType, expires_in: body.expires_in, scopes: body.scopes, tool_ids: body.tool_ids, require_signature: body.require_signature },
      principal,
    );
    return issuedView(issued);
  }

  @Get()
  async list(@CurrentPrincipal() principal: Principal, @Query() page: PageQuery) {
    const { keys, total } = await this.keys.list(principal.accountId, page.limit, page.offset);
    return { keys: keys.map(keyView), total, limit: page.limit, offset: page.offset };
  }

  @Get(':key_id')
  async get(@CurrentPrincipal() principal: Principal, @Param('key_id') keyId: string) {
    return keyView(await this.keys.get(principal.accountId, keyId));
  }

  @Delete(':key_id')
  async revoke(@CurrentPrincipal() principal: Principal, @Param('key_id') keyId: string) {
    return keyView(await this.keys.revoke(principal.accountId, keyId));
  }

  @Post(':key_id/regenerate')
  @HttpCode(201)
  async regenerate(@CurrentPrincipal() principal: Principal, @Param('key_id') keyId: string) {
    return issuedView(await this.keys.regenerate(principal.accountId, keyId, principal));
  }

  @Post(':key_id/rotate')
  @HttpCode(201)
  async rotate(@CurrentPrincipal() principal: Principal, @Param('key_id') keyId: string, @Body() body: RotateKeyDto) {
    const { old, ...issued } = await this.keys.rotate(principal.accountId, keyId, body?.revoke_old_after, principal);
    return { ...issuedView(issued), old_key: keyView(old) };
  }
}

/** The only response that ever carries a secret (and a signing secret, for keys that sign). */
function issuedView(issued: IssuedKey) {
  return { ...keyView(issued.record), key: issued.secret, ...(issued.signingSecret ? { signing_secret: issued.signingSecret } : {}) };
}
