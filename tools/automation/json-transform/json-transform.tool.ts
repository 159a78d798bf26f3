import { BoundedJsonata, Tool, type ToolContext, type ToolHandler, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';

type JsonTransformInput = ToolInput<typeof definition>;

type JsonTransformOutput = ToolOutput<typeof definition>;

const orders = {
  orders: [
    { id: 'A-1', customer: 'ada', total: 120, status: 'paid' },
    { id: 'A-2', customer: 'bob', total: 80, status: 'refunded' },
    { id: 'A-3', customer: 'ada', total: 45, status: 'paid' },
  ],
};

const definition = defineTool({
  id: 'json-transform',
  name: 'JSON Transform',
  category: 'automation',
  description: 'Evaluates a JSONata expression over a JSON document, bounded in time, nesting depth and result size.',
  status: 'ready',
  version: '1.0.0',
  config: {
    JSON_TRANSFORM_TIME_LIMIT_SECONDS: { type: 'integer', default: 5, description: 'How long one evaluation may run before it is stopped as an endless loop.' },
  },
  cacheable: true,
  timeout: 10,
  rate_limit: 100,
  input: {
    type: 'object',
    properties: {
      expression: {
        type: 'string',
        minLength: 1,
        maxLength: 10_000,
        description: 'The JSONata expression to evaluate (https://docs.jsonata.org).',
      },
      data: {
        description: 'The JSON document the expression is evaluated against.',
      },
      bindings: {
        type: 'object',
        maxProperties: 50,
        description: 'Extra variables for the expression: a member `name` is available as `$name`.',
      },
    },
    required: ['expression', 'data'],
  },
  output: {
    type: 'object',
    properties: {
      result: {
        description: 'The value of the expression, or null when it matches nothing.',
      },
    },
    required: ['result'],
  },
  examples: [
    {
      name: 'Total of paid orders per customer',
      input: {
        expression: "orders[status = 'paid']{ customer: $sum(total) }",
        data: orders,
      },
      output: { result: { ada: 165 } },
    },
    {
      name: 'Filter with a bound variable',
      input: {
        expression: 'orders[total >= $min].id',
        data: orders,
        bindings: { min: 50 },
      },
      output: { result: ['A-1', 'A-2'] },
    },
    {
      name: 'No match yields null',
      input: { expression: 'orders[status = "cancelled"]', data: orders },
      output: { result: null },
    },
  ],
});

@Tool(definition)
export class JsonTransformTool implements ToolHandler<typeof definition> {
  private readonly jsonata = new BoundedJsonata();

  async execute(input: JsonTransformInput, ctx: ToolContext<typeof definition>): Promise<JsonTransformOutput> {
    const timeLimitMs = Number(ctx.config.JSON_TRANSFORM_TIME_LIMIT_SECONDS) * 1000;
    return { result: await this.jsonata.evaluate(input.expression, input.data, input.bindings, { signal: ctx.signal, timeLimitMs }) };
  }
}
