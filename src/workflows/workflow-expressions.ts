import { Injectable } from '@nestjs/common';
import { AppException } from '../common/errors';
import type { ToolContext } from '../tools/sdk';
import { ToolCatalogue } from '../tools/tool-catalogue';
import { expressionOf } from './workflow-document';

/** The tool whose evaluator, with its bounds, workflow expressions run on (docs/tools.md#json-transform-automation). */
const EVALUATOR = 'json-transform';

/** What an expression reads: the run's inputs, its steps so far, and within a for_each its item and index. */
export interface ExpressionScope {
  inputs: Record<string, unknown>;
  steps: Record<string, unknown>;
  item?: unknown;
  index?: number;
}

/**
 * Evaluates a workflow's JSONata expressions with json-transform's own evaluator: the same
 * bounds (depth, memory, time limit, linear-time regular expressions, the event loop shared) and
 * the same compiled-expression cache, without a copy of either. A failure is an INVALID_INPUT naming the expression.
 */
@Injectable()
export class WorkflowExpressions {
  constructor(private readonly catalogue: ToolCatalogue) {}

  async evaluate(expression: string, scope: ExpressionScope, signal: AbortSignal): Promise<unknown> {
    if (!this.catalogue.has(EVALUATOR)) throw new AppException('INTERNAL_ERROR', `Workflow expressions need the tool '${EVALUATOR}', which this service does not load`);
    const tool = this.catalogue.get(EVALUATOR);
    // The evaluator reads only its signal and settings from its context.
    const context = { signal, config: tool.config } as unknown as ToolContext;
    const { result } = (await tool.handler.execute({ expression, data: scope }, context)) as { result: unknown };
    return result;
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
