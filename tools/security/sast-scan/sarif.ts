/** sast-scan's findings as a SARIF 2.1.0 log (the format code-scanning services import). */
import { builtinRules } from 'eslint/use-at-your-own-risk';
import { PLUGINS } from './plugins';
import { SAST_RULES, type SastSeverity } from './rules';
import type { SastFinding } from './scan';
import type { Step } from './taint/model';

export type SarifLog = Record<string, unknown>;

const LEVELS: Record<SastSeverity, 'error' | 'warning' | 'note'> = { critical: 'error', high: 'error', medium: 'warning', low: 'note' };

export function sarifLog(findings: SastFinding[], ruleIds: string[], toolVersion: string): SarifLog {
  const index = new Map(ruleIds.map((id, position) => [id, position]));
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: { driver: { name: 'sast-scan', semanticVersion: toolVersion, rules: ruleIds.map(ruleDescriptor) } },
        columnKind: 'utf16CodeUnits',
        results: findings.map((finding) => ({
          ruleId: finding.rule,
          ruleIndex: index.get(finding.rule),
          level: LEVELS[finding.severity],
          message: { text: finding.message },
          locations: [
            {
              physicalLocation: {
                artifactLocation: { uri: encodeURI(finding.file) },
                region: { startLine: finding.line, startColumn: finding.column, endLine: finding.end_line, endColumn: finding.end_column },
              },
            },
          ],
          ...(finding.flow && { codeFlows: [codeFlow(finding.flow)] }),
        })),
      },
    ],
  };
}

/** A taint path as SARIF's code flow: one thread, source first, sink last. */
function codeFlow(flow: Step[]) {
  return {
    threadFlows: [
      {
        locations: flow.map((step) => ({
          location: {
            physicalLocation: { artifactLocation: { uri: encodeURI(step.file) }, region: { startLine: step.line, startColumn: step.column } },
            message: { text: step.note },
          },
        })),
      },
    ],
  };
}

function ruleDescriptor(id: string) {
  const meta = ruleMeta(id);
  // Plugins write paragraphs with markdown links; SARIF's short description is one plain sentence.
  const full = (SAST_RULES[id].description ?? meta?.docs?.description ?? id).replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/\s+/g, ' ').trim();
  const short = /^.*?[.!?](?=\s+[A-Z]|$)/.exec(full)?.[0] ?? full; // a sentence ends before a capital, not at 'e.g.'
  return {
    id,
    shortDescription: { text: short },
    ...(short !== full && { fullDescription: { text: full } }),
    ...(meta?.docs?.url && { helpUri: meta.docs.url }),
    defaultConfiguration: { level: LEVELS[SAST_RULES[id].severity] },
    properties: { tags: ['security', `external/cwe/cwe-${SAST_RULES[id].cwe}`], 'security-severity': SEVERITY_SCORES[SAST_RULES[id].severity] },
  };
}

/** The scores GitHub code scanning maps back to critical/high/medium/low. */
const SEVERITY_SCORES: Record<SastSeverity, string> = { critical: '9.5', high: '8.0', medium: '5.5', low: '2.0' };

function ruleMeta(id: string) {
  if (id.startsWith('taint/')) return undefined;
  const slash = id.lastIndexOf('/');
  if (slash < 0) return builtinRules.get(id)?.meta;
  return PLUGINS[id.slice(0, slash)]?.rules?.[id.slice(slash + 1)]?.meta;
}
