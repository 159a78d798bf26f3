import type { ToolDefinition } from './sdk';

type Resolved = Required<Pick<ToolDefinition, 'status' | 'timeout' | 'rate_limit' | 'cacheable' | 'cache_ttl'>> & ToolDefinition;

/** A tool as GET /v1/tools lists it; computed once at boot. */
export function toolSummaryView(d: Resolved): Record<string, unknown> {
  const inputs = Object.fromEntries(
    Object.entries(d.inputs).map(([name, { secret: _secret, required, ...rest }]) => [name, { ...rest, required: required ?? false }]),
  );
  const outputs = Object.fromEntries(Object.entries(d.outputs).map(([name, output]) => [name, output]));
  return {
    id: d.id,
    name: d.name,
    category: d.category,
    description: d.description,
    status: d.status,
    version: d.version,
    inputs,
    outputs,
    rate_limit: `${d.rate_limit} calls/min`,
    timeout: `${d.timeout}s`,
    cacheable: d.cacheable,
    ...(d.cacheable && { cache_ttl: d.cache_ttl }),
  };
}

/** The single-tool read: the summary plus examples and the documentation URL. */
export function toolDetailView(d: Resolved, documentation: string): Record<string, unknown> {
  return { ...toolSummaryView(d), examples: d.examples, documentation };
}
