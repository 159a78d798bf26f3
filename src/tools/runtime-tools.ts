import { Injectable } from '@nestjs/common';
import type { RegisteredTool } from './tool-catalogue';

/** Finds a tool an account added at run time by its id, or undefined. */
export type RuntimeToolFinder = (accountId: string, toolId: string) => Promise<RegisteredTool | undefined>;

/**
 * Tools that are not in the registry because an account added them at run time (an upstream
 * server's, docs/upstreams.md): the runner finds a queued job's tool here when the registry has
 * none. The module owning such tools provides the finder; without one there are none.
 */
@Injectable()
export class RuntimeTools {
  private finder?: RuntimeToolFinder;

  provide(finder: RuntimeToolFinder): void {
    this.finder = finder;
  }

  find(accountId: string, toolId: string): Promise<RegisteredTool | undefined> {
    return this.finder ? this.finder(accountId, toolId) : Promise.resolve(undefined);
  }
}
