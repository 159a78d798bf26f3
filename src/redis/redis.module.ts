import { Global, Module } from '@nestjs/common';
import { RedisConnections } from './redis-connections';

/** The owner of every Redis connection (RedisConnections); global so its shutdown comes after its users'. */
@Global()
@Module({ providers: [RedisConnections], exports: [RedisConnections] })
export class RedisModule {}
