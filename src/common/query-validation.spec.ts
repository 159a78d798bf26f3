import 'reflect-metadata';
import { BadRequestException, type ArgumentMetadata } from '@nestjs/common';
import { IsInt, IsOptional, Max } from 'class-validator';
import { Transform } from 'class-transformer';
import { QueryRememberingValidationPipe, ValidatedOnce } from './query-validation';

class PlainQuery {
  @IsOptional() @Transform(({ value }) => Number(value)) @IsInt() @Max(10)
  limit: number = 5;
}

@ValidatedOnce()
class RememberedQuery extends PlainQuery {}

describe('QueryRememberingValidationPipe', () => {
  const pipe = new QueryRememberingValidationPipe({ transform: true, whitelist: true });
  const query = (metatype: ArgumentMetadata['metatype']): ArgumentMetadata => ({ type: 'query', metatype });

  it('validates a marked class once per distinct query and shares the frozen instance', async () => {
    const first = await pipe.transform({ limit: '3' }, query(RememberedQuery));
    expect(first).toEqual(Object.assign(new RememberedQuery(), { limit: 3 }));
    expect(Object.isFrozen(first)).toBe(true);
    expect(await pipe.transform({ limit: '3' }, query(RememberedQuery))).toBe(first);
    expect(await pipe.transform({ limit: '4' }, query(RememberedQuery))).not.toBe(first);
  });

  it('rejects an invalid query every time, and leaves unmarked classes and bodies alone', async () => {
    for (let i = 0; i < 2; i++) await expect(pipe.transform({ limit: '11' }, query(RememberedQuery))).rejects.toBeInstanceOf(BadRequestException);
    const plain = await pipe.transform({ limit: '3' }, query(PlainQuery));
    expect(await pipe.transform({ limit: '3' }, query(PlainQuery))).not.toBe(plain);
    expect(Object.isFrozen(plain)).toBe(false);
    const body = await pipe.transform({ limit: '3' }, { type: 'body', metatype: RememberedQuery });
    expect(await pipe.transform({ limit: '3' }, { type: 'body', metatype: RememberedQuery })).not.toBe(body);
  });
});
