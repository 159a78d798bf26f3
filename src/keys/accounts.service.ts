import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AppException } from '../common/errors';
import { newAccountId } from '../common/ids';
import { Account } from './account.entity';
import { Tier } from '../identity/tiers';

export interface NewAccount {
  name: string;
  tier: Tier;
  requests_per_minute?: number | null;
  monthly_calls?: number | null;
  retention_days?: number | null;
  workspaces?: number | null;
  workspace_bytes?: number | null;
}

/** Accounts are created by operators (CLI, bootstrap), never over the public API. */
@Injectable()
export class AccountsService {
  constructor(@InjectRepository(Account) private readonly accounts: Repository<Account>) {}

  async create(input: NewAccount): Promise<Account> {
    const custom = (['requests_per_minute', 'monthly_calls', 'retention_days', 'workspaces', 'workspace_bytes'] as const).filter((name) => input[name] != null);
    if (input.tier !== 'enterprise' && custom.length > 0) {
      throw AppException.invalidRequest(`${custom.join(', ')}: custom limits are for enterprise accounts; the ${input.tier} tier has fixed ones`, { parameter: custom[0] });
    }
    if (await this.accounts.existsBy({ name: input.name })) {
      throw new AppException('CONFLICT', `An account named '${input.name}' already exists`);
    }
    return this.accounts.save(this.accounts.create({ id: newAccountId(), ...input }));
  }

  /** Creates the account unless one with that name exists (concurrent starters agree). */
  async ensure(input: NewAccount): Promise<Account> {
    await this.accounts.createQueryBuilder().insert().values({ id: newAccountId(), ...input }).orIgnore().execute();
    return this.accounts.findOneByOrFail({ name: input.name });
  }

  list(): Promise<Account[]> {
    return this.accounts.find({ order: { created_at: 'ASC' } });
  }

  async findByName(name: string): Promise<Account> {
    const account = await this.accounts.findOneBy({ name });
    if (!account) throw AppException.notFound('Account', name);
    return account;
  }
}
