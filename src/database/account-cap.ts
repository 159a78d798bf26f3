import type { EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import { AppException } from '../common/errors';

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
      throw new AppException('CONFLICT', `An account holds at most ${limit} ${noun}: delete one first`, { details: { limit } });
    }
    await insert(tx);
  });
}
