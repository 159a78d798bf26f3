import type { RegisteredTool } from '../tools/tool-catalogue';
import { ref, SchemaObject } from './api-schemas';

/** `json-transform` → `JsonTransform`: a component name per tool. */
export function componentName(toolId: string): string {
  return toolId.replace(/(^|-)([a-z0-9])/g, (_m, _dash, c: string) => c.toUpperCase());
}

export const INVOKE_QUERY_PARAMETERS = [
  { name: 'async', in: 'query', required: false, description: 'Queue the execution and answer 202.', schema: { type: 'boolean', default: false } },
  { name: 'timeout', in: 'query', required: false, description: 'Seconds, at most 300; default the tool’s own.', schema: { type: 'integer', minimum: 1, maximum: 300 } },
];

export const INVOKE_HEADER_PARAMETERS = [
  { name: 'X-Idempotency-Key', in: 'header', required: false, description: 'Makes retries safe for 24 h (1..255 visible ASCII).', schema: { type: 'string', minLength: 1, maxLength: 255 } },
  { name: 'Cache-Control', in: 'header', required: false, description: '`no-cache` bypasses the result cache.', schema: { type: 'string' } },
];

/** The flat body (the inputs themselves) or the envelope `{ tool_id, inputs, options }` (docs/API.md#request-bodies). */
export function invokeBody(input: SchemaObject, toolId?: string): SchemaObject {
  return {
    required: true,
    content: {
      'application/json': {
        schema: {
          oneOf: [
            input,
            {
              type: 'object',
              required: ['inputs'],
              properties: {
                tool_id: toolId ? { const: toolId } : { type: 'string' },
                inputs: input,
                options: ref('InvokeOptions'),
                input_responses: { type: 'object', description: "Answers to the questions the last round's `input_required` answer asked, by key." },
                request_state: { type: 'string', maxLength: 65_536, description: 'The `request_state` that answer handed out.' },
              },
            },
          ],
        },
      },
    },
  };
}

export function invokeSuccess(result: SchemaObject): SchemaObject {
  return {
    type: 'object',
    required: ['status', 'execution_id', 'result', 'timing'],
    properties: {
      status: { const: 'success' },
      execution_id: { type: 'string' },
      result,
      timing: ref('Timing'),
      cache: ref('CacheInfo'),
      recorded: { const: false, description: 'Present when the tool ran but its record could not be written (database unavailable): do not retry blindly.' },
      warning: { type: 'string', description: 'Says why, when `recorded` is false.' },
    },
  };
}

/** One typed operation per registered tool: its input schema as the body, its output schema in the 200 answer. */
export function toolOperations(tools: readonly RegisteredTool[]) {
  const schemas: Record<string, SchemaObject> = {};
  const paths: Record<string, { post: Record<string, unknown> }> = {};
  for (const tool of [...tools].sort((a, b) => a.definition.id.localeCompare(b.definition.id))) {
    const { id, name, description, category, version } = tool.definition;
    const base = componentName(id);
    schemas[`${base}Input`] = tool.inputSchema;
    schemas[`${base}Output`] = tool.outputSchema;
    schemas[`${base}Success`] = invokeSuccess(ref(`${base}Output`));
    paths[`/v1/tools/${id}/invoke`] = {
      post: {
        operationId: `invoke${base}`,
        summary: `Invoke ${name}`,
        description: `${description}\n\nCategory \`${category}\`, version ${version}. The same operation as \`POST /v1/tools/{tool_id}/invoke\` with \`tool_id=${id}\`, typed by this tool's schemas.`,
        tags: ['Tools by id'],
        parameters: [...INVOKE_QUERY_PARAMETERS, ...INVOKE_HEADER_PARAMETERS],
        requestBody: invokeBody(ref(`${base}Input`), id),
        responses: {
          '200': {
            description: "The tool ran and succeeded; or, when it asks its caller, `{ status: 'input_required', input_requests, request_state }` (answer by calling again).",
            content: { 'application/json': { schema: ref(`${base}Success`) } },
          },
        },
      },
    };
  }
  return { schemas, paths };
}
