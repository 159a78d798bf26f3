import type { ResolvedDefinition } from './tool-catalogue';
import { memberType } from './tool-schema';

/** The page behind a tool's `documentation` URL: Markdown generated from its definition. */
export function toolDocumentation(d: ResolvedDefinition, publicUrl: string): string {
  const required = new Set(d.input.required ?? []);
  const inputs = Object.entries(d.input.properties).map(
    ([name, i]) => `| \`${name}\` | ${i.type ?? 'any'} | ${required.has(name) ? 'yes' : 'no'} | ${i.enum ? i.enum.join(', ') : ''} | ${i.default === undefined ? '' : `\`${JSON.stringify(i.default)}\``} | ${i.description} |`,
  );
  const outputs = Object.entries(d.output.properties).map(([name, o]) => `| \`${name}\` | ${memberType(o).type} | ${o.description} |`);
  const examples = d.examples.map(
    (e) =>
      `### ${e.name}\n\n\`\`\`sh\ncurl -s -X POST ${publicUrl}/v1/tools/${d.id}/invoke \\\n  -H "Authorization: Bearer $TOS_API_KEY" -H "Content-Type: application/json" \\\n  -d '${JSON.stringify(e.input).replace(/'/g, "'\\''")}'\n\`\`\`\n\nResult:\n\n\`\`\`json\n${JSON.stringify(e.output, null, 2)}\n\`\`\``,
  );
  return [
    `# ${d.name} (\`${d.id}\`)`,
    '',
    d.description,
    '',
    `Category: ${d.category} · Status: ${d.status} · Version: ${d.version} · Timeout: ${d.timeout}s · Rate limit: ${d.rate_limit} calls/min · Cacheable: ${d.cacheable ? `yes (${d.cache_ttl}s)` : 'no'}`,
    '',
    '## Inputs',
    '',
    '| name | type | required | allowed values | default | description |',
    '|---|---|---|---|---|---|',
    ...inputs,
    '',
    '## Outputs',
    '',
    '| name | type | description |',
    '|---|---|---|',
    ...outputs,
    '',
    '## Examples',
    '',
    ...examples,
    '',
  ].join('\n');
}
