import { Controller, Delete, Get, HttpCode, Param } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { InjectRepository } from '@nestjs/typeorm';
import { In, Repository } from 'typeorm';
import { AppException } from '../common/errors';
import { CurrentPrincipal, RequireScopes } from '../identity/auth.decorators';
import type { Principal } from '../identity/principal';
import { OAuthRecord } from './oauth-record.entity';
import { GRANT_TOOLS_MODEL, OAuthStore } from './oauth-store';

export interface GrantView {
  id: string;
  client_id: string;
  client_name: string | null;
  /** The client's home page, from its registration or Client ID Metadata Document. */
  client_uri: string | null;
  /** Per resource (token audience), the scopes granted. */
  resources: Record<string, string[]>;
  /** The tools its tokens may call; null = every tool the account may call. */
  tools: string[] | null;
  created_at: string | null;
  /** When the client last got tokens with it (the code exchange or a refresh); access tokens are not looked up, so their use is not seen. */
  last_used_at: string | null;
  expires_at: string | null;
}

const GRANT_ID = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * The applications an account approved on the built-in authorization server's consent page
 * (docs/authorization.md#grants): listed, and revoked — which deletes its refresh tokens at once.
 */
@ApiTags('oauth')
@Controller('v1/oauth/grants')
export class OAuthGrantsController {
  constructor(@InjectRepository(OAuthRecord) private readonly records: Repository<OAuthRecord>) {}

  @Get()
  @RequireScopes('keys:manage')
  @ApiOperation({ summary: "The account's OAuth grants (connected apps)" })
  async list(@CurrentPrincipal() principal: Principal): Promise<{ grants: GrantView[] }> {
    const now = new Date();
    const grants = (await this.records.find({ where: { model: 'Grant', account_id: principal.accountId }, order: { id: 'ASC' } })).filter((row) => !row.expires_at || row.expires_at > now);
    const ids = grants.map((row) => row.id);
    const clientIds = [...new Set(grants.map((row) => String(row.payload.clientId)))];
    const [tools, clients, refreshTokens] = await Promise.all([
      this.records.find({ where: { model: GRANT_TOOLS_MODEL, id: In(ids) } }),
      this.records.find({ where: { model: 'Client', id: In(clientIds) } }),
      this.records.find({ where: { model: 'RefreshToken', grant_id: In(ids) } }),
    ]);
    const consentOf = new Map(tools.map((row) => [row.id, row.payload]));
    const clientOf = new Map(clients.map((row) => [row.id, row.payload]));
    const lastUsed = new Map<string, number>();
    for (const token of refreshTokens) {
      const issued = token.payload.iat;
      if (typeof issued === 'number' && issued > (lastUsed.get(token.grant_id!) ?? 0)) lastUsed.set(token.grant_id!, issued);
    }
    return {
      grants: grants.map((row) => ({
        id: row.id,
        client_id: String(row.payload.clientId),
        // A registered client as it is now; a metadata-document client as the consent page named it.
        client_name: text(clientOf.get(String(row.payload.clientId))?.client_name ?? consentOf.get(row.id)?.client_name),
        client_uri: text(clientOf.get(String(row.payload.clientId))?.client_uri ?? consentOf.get(row.id)?.client_uri),
        resources: Object.fromEntries(Object.entries((row.payload.resources ?? {}) as Record<string, string>).map(([resource, scope]) => [resource, scope.split(' ').filter(Boolean)])),
        tools: (consentOf.get(row.id)?.tools as string[] | null | undefined) ?? null,
        created_at: typeof row.payload.iat === 'number' ? new Date(row.payload.iat * 1000).toISOString() : null,
        last_used_at: lastUsed.has(row.id) ? new Date(lastUsed.get(row.id)! * 1000).toISOString() : null,
        expires_at: row.expires_at?.toISOString() ?? null,
      })),
    };
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScopes('keys:manage')
  @ApiOperation({ summary: 'Revoke a grant: its refresh tokens stop at once, its access tokens when they expire (5 minutes at most)' })
  async revoke(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    const grant = GRANT_ID.test(id) ? await this.records.findOne({ where: { model: 'Grant', id, account_id: principal.accountId } }) : null;
    // Another account's grant reads as absent: its existence is not told.
    if (!grant) throw new AppException('NOT_FOUND', `No grant '${id}' on this account`);
    await new OAuthStore(this.records, 'Grant').revokeByGrantId(id);
  }
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}
