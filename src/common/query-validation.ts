import { ArgumentMetadata, ValidationPipe, type Type } from '@nestjs/common';

const VALIDATED_ONCE = Symbol('tos:validated-once');
/** Distinct queries remembered per class; past it the memory starts over (searches are open-ended). */
const MAX_REMEMBERED = 1_000;

/**
 * Marks a query class whose instances handlers only read: each distinct query is validated once,
 * and the frozen instance is shared by every request that sends it (GET /v1/tools: class-validator
 * was a third of a revalidation's server time).
 */
export const ValidatedOnce = (): ClassDecorator => (target) => Reflect.defineMetadata(VALIDATED_ONCE, true, target);

/** The global ValidationPipe, remembering the queries of classes marked ValidatedOnce (invalid ones are not remembered). */
export class QueryRememberingValidationPipe extends ValidationPipe {
  private readonly remembered = new Map<Type, Map<string, object>>();

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const { metatype } = metadata;
    if (metadata.type !== 'query' || !metatype || !Reflect.getOwnMetadata(VALIDATED_ONCE, metatype)) return super.transform(value, metadata);
    let queries = this.remembered.get(metatype);
    if (!queries) this.remembered.set(metatype, (queries = new Map()));
    const key = JSON.stringify(value);
    let query = queries.get(key);
    if (!query) {
      query = Object.freeze(await super.transform(value, metadata)) as object;
      if (queries.size >= MAX_REMEMBERED) queries.clear();
      queries.set(key, query);
    }
    return query;
  }
}
