import { Account } from '../keys/account.entity';
import { ApiKey } from '../keys/api-key.entity';
import { Execution } from '../executions/execution.entity';
import { IdempotencyRecord } from '../idempotency/idempotency-record.entity';
import { AccountSecret } from '../secrets/account-secret.entity';

/** Every entity of the service; the migrations create exactly these tables. */
export const ENTITIES = [Account, ApiKey, Execution, IdempotencyRecord, AccountSecret];
