import { In, type EntityManager, type EntityTarget, type FindOperator, type ObjectLiteral } from 'typeorm';
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

/**
 * Runs `insert` while the account holds fewer than `limit` rows of `entity`, serialising the
 * account's creations (its row locked), so the cap holds under concurrent POSTs.
 */
export async function underAccountCap<T extends ObjectLiteral>(
  manager: EntityManager,
  accountId: string,
  entity: EntityTarget<T>,
  limit: number,
  noun: string,
  insert: (manager: EntityManager) => Promise<unknown>,
): Promise<void> {
  await manager.transaction(async (tx) => {
    await tx.query('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
    if ((await tx.count(entity, { where: { account_id: accountId } as never })) >= limit) {
      throw new AppException('CONFLICT', `An account of this tier holds at most ${limit} ${noun}: delete one first`, { details: { limit } });
    }
    await insert(tx);
  });
}
