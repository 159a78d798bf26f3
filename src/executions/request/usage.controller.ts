import { Controller, Get } from '@nestjs/common';
import { CurrentPrincipal } from '../../identity/auth.decorators';
import type { Principal } from '../../identity/principal';
import { AdmissionGate } from '../../limits/admission-gate';

/**
 * GET /v1/usage: any caller may see what it has spent (docs/API.md#rate-limits-and-quotas), its tier and its account's
 * month, and which key it is (`tos auth status` and `tos login` ask here who a key is).
 */
@Controller('v1/usage')
export class UsageController {
  constructor(private readonly gate: AdmissionGate) {}

  @Get()
  async usage(@CurrentPrincipal() principal: Principal) {
    const key = {
      id: principal.keyId,
      type: principal.keyType,
      account_id: principal.accountId,
      scopes: [...principal.scopes],
      tool_ids: principal.toolIds && [...principal.toolIds],
      expires_at: principal.expiresAt?.toISOString() ?? null,
    };
    return { ...(await this.gate.usage(principal)), key };
  }
}
