import { In, type FindOperator } from 'typeorm';
import { AppException } from '../common/errors';
import type { Principal } from '../identity/principal';

/**
 * Which schedules or triggers a caller sees: its account's, and for a key narrowed to some tools
 * only those whose target is one of them (least privilege, as for webhooks and executions).
 */
export function visibleTo(principal: Principal): { account_id: string; target_kind?: 'tool'; target_id?: FindOperator<string> } {
  return { account_id: principal.accountId, ...(principal.toolIds && { target_kind: 'tool' as const, target_id: In([...principal.toolIds]) }) };
}

/** The row when the caller's account owns it (the lookup filters by account), else 404: another account's rows do not exist for it. */
export function ownedBy<T>(row: T | null, what: string, id: string): T {
  if (!row) throw AppException.notFound(what, id);
  return row;
}
