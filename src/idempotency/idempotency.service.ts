import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import { LessThan, Repository } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { canonicalJson } from '../common/canonical-json';
import { AppException } from '../common/errors';
import { IdempotencyRecord } from './idempotency-record.entity';

const KEEP_MS = 24 * 3_600_000;
/** A claim still in flight after the longest possible request (300 s timeout + margin) was abandoned by a dead process. */
const ABANDONED_AFTER_MS = 360_000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export interface IdempotencyScope {
  keyId: string;
  toolId: string;
  idempotencyKey: string;
}

export type Claim = { replay: false } | { replay: true; status: number; body: Record<string, unknown> };

/**
 * X-Idempotency-Key (docs/API.md#idempotent-retries), in the database so every API process sees the same claims:
 * the first request claims the key atomically (primary key), its answer is stored for 24 h and
 * replayed to retries with the same request.
 */
@Injectable()
export class IdempotencyService {
  constructor(@InjectRepository(IdempotencyRecord) private readonly records: Repository<IdempotencyRecord>) {}

  static validKey(value: string): boolean {
    return KEY_PATTERN.test(value);
  }

  static requestHash(request: unknown): string {
    return createHash('sha256').update(canonicalJson(request)).digest('hex');
  }

  async claim(scope: IdempotencyScope, requestHash: string, now = new Date()): Promise<Claim> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const inserted = await this.records.query(
        `INSERT INTO idempotency_keys (key_id, tool_id, idempotency_key, request_hash, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING key_id`,
        [scope.keyId, scope.toolId, scope.idempotencyKey, requestHash, now, new Date(now.getTime() + KEEP_MS)],
      );
      if ((inserted as unknown[]).length > 0) return { replay: false };
      const existing = await this.records.findOneBy(this.where(scope));
      if (!existing) continue; // released meanwhile: claim again
      const abandoned = existing.response_status === null && existing.created_at.getTime() < now.getTime() - ABANDONED_AFTER_MS;
      if (existing.expires_at <= now || abandoned) {
        await this.records.delete({ ...this.where(scope), created_at: existing.created_at });
        continue;
      }
      if (existing.request_hash !== requestHash) {
        throw AppException.invalidRequest('This X-Idempotency-Key was already used with a different request', { parameter: 'X-Idempotency-Key' });
      }
      if (existing.response_status === null) {
        throw new AppException('CONFLICT', 'The request with this X-Idempotency-Key is still in progress; retry shortly', { retryable: true, retry_after: 1 });
      }
      return { replay: true, status: existing.response_status, body: existing.response_body ?? {} };
    }
    throw new AppException('CONFLICT', 'The X-Idempotency-Key is contended; retry shortly', { retryable: true, retry_after: 1 });
  }

  async complete(scope: IdempotencyScope, status: number, body: Record<string, unknown>): Promise<void> {
    await this.records.update(this.where(scope), { response_status: status, response_body: body as QueryDeepPartialEntity<Record<string, unknown>> });
  }

  /** The request failed before it produced an answer worth replaying (validation, 503): nothing is kept. */
  async release(scope: IdempotencyScope): Promise<void> {
    await this.records.delete(this.where(scope));
  }

  async purgeExpired(now = new Date()): Promise<number> {
    return (await this.records.delete({ expires_at: LessThan(now) })).affected ?? 0;
  }

  private where(scope: IdempotencyScope) {
    return { key_id: scope.keyId, tool_id: scope.toolId, idempotency_key: scope.idempotencyKey };
  }
}
