import { Controller, Get } from '@nestjs/common';
import { CurrentPrincipal } from '../../identity/auth.decorators';
import type { Principal } from '../../identity/principal';
import { AdmissionGate } from '../../limits/admission-gate';

/** GET /v1/usage: any caller may see what it has spent (DESIGN §5.13), its tier and its account's month. */
@Controller('v1/usage')
export class UsageController {
  constructor(private readonly gate: AdmissionGate) {}

  @Get()
  usage(@CurrentPrincipal() principal: Principal) {
    return this.gate.usage(principal);
  }
}
