import { Injectable } from '@nestjs/common';
import { BoundedJsonata } from '../tools/sdk';
import { expressionOf } from './workflow-document';

/** How long one expression may run: json-transform's default time limit (docs/tools.md#json-transform-automation). */
const EXPRESSION_TIME_LIMIT_MS = 5_000;

/** What an expression reads: the run's inputs, its steps so far, and within a for_each its item and index. */
export interface ExpressionScope {
  inputs: Record<string, unknown>;
  steps: Record<string, unknown>;
  item?: unknown;
  index?: number;
}

/**
 * Evaluates a workflow's JSONata expressions on the SDK's BoundedJsonata, json-transform's engine:
 * the same bounds (depth, memory, linear-time regular expressions, the event loop shared) and a
 * compiled-expression cache, whether or not json-transform is loaded. A failure is an INVALID_INPUT naming the expression.
 */
@Injectable()
export class WorkflowExpressions {
  private readonly jsonata = new BoundedJsonata();

  evaluate(expression: string, scope: ExpressionScope, signal: AbortSignal): Promise<unknown> {
    return this.jsonata.evaluate(expression, scope, undefined, { signal, timeLimitMs: EXPRESSION_TIME_LIMIT_MS });
  }

  /** A value with its `${{ … }}` parts evaluated, at any depth of a literal object or list. */
  async resolve(value: unknown, scope: ExpressionScope, signal: AbortSignal): Promise<unknown> {
    const expression = expressionOf(value);
    if (expression !== undefined) return this.evaluate(expression, scope, signal);
    if (Array.isArray(value)) return Promise.all(value.map((member) => this.resolve(member, scope, signal)));
    if (value && typeof value === 'object') {
      const entries = await Promise.all(Object.entries(value).map(async ([key, member]) => [key, await this.resolve(member, scope, signal)] as const));
      return Object.fromEntries(entries);
    }
    return value;
  }
}
