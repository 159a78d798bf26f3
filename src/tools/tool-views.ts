import type { ToolDefinition, ToolInputProperty, ToolOutputProperty } from './sdk';
import { memberType } from './tool-schema';

type Resolved = Required<Pick<ToolDefinition, 'status' | 'timeout' | 'rate_limit' | 'cacheable' | 'cache_ttl'>> & ToolDefinition;

/** How GET /v1/tools names the service's own annotations of an input member. */
const INPUT_VIEW_NAMES: Readonly<Record<string, string>> = { 'x-mcp-header': 'mcp_header', 'x-request-headers': 'headers' };

/**
 * One input as the tools API shows it (its `type`, `any` when absent, then the rest as declared,
 * then `required`); credentials' `writeOnly` stays internal.
 */
function inputView(member: ToolInputProperty, required: boolean): Record<string, unknown> {
  const entries = Object.entries(member).filter(([keyword]) => keyword !== 'type' && keyword !== 'writeOnly');
  return { type: member.type ?? 'any', ...Object.fromEntries(entries.map(([keyword, value]) => [INPUT_VIEW_NAMES[keyword] ?? keyword, value])), required };
}

/** One output as the tools API shows it: its type without null, `nullable` and `optional` flags, the enum without null. */
function outputView(member: ToolOutputProperty, required: boolean): Record<string, unknown> {
  const { type, nullable } = memberType(member);
  const rest = Object.entries(member).filter(([keyword]) => keyword !== 'type').map(([keyword, value]) => [keyword, keyword === 'enum' ? (value as unknown[]).filter((v) => v !== null) : value]);
  return { type, ...(nullable && { nullable: true }), ...(!required && { optional: true }), ...Object.fromEntries(rest) };
}

function membersView<M>(schema: { properties: Readonly<Record<string, M>>; required?: readonly string[] }, view: (member: M, required: boolean) => Record<string, unknown>) {
  const required = new Set(schema.required ?? []);
  return Object.fromEntries(Object.entries(schema.properties).map(([name, member]) => [name, view(member, required.has(name))]));
}

/** A tool as GET /v1/tools lists it; computed once at boot. */
export function toolSummaryView(d: Resolved): Record<string, unknown> {
  return {
    id: d.id,
    name: d.name,
    category: d.category,
    description: d.description,
    status: d.status,
    version: d.version,
    inputs: membersView(d.input, inputView),
    outputs: membersView(d.output, outputView),
    rate_limit: `${d.rate_limit} calls/min`,
    timeout: `${d.timeout}s`,
    cacheable: d.cacheable,
    ...(d.cacheable && { cache_ttl: d.cache_ttl }),
  };
}

/** SPEC §2.1's compact listing (GET /v1/tools?view=compact): the summary with each input and output as its type name. */
export function toolCompactView(d: Resolved): Record<string, unknown> {
  const typeNames = (properties: Readonly<Record<string, ToolInputProperty | ToolOutputProperty>>) =>
    Object.fromEntries(Object.entries(properties).map(([name, member]) => [name, memberType(member).type]));
  return { ...toolSummaryView(d), inputs: typeNames(d.input.properties), outputs: typeNames(d.output.properties) };
}

/** The single-tool read: the summary plus examples and the documentation URL. */
export function toolDetailView(d: Resolved, documentation: string): Record<string, unknown> {
  return { ...toolSummaryView(d), examples: d.examples, documentation };
}
