/** secretlint's provider rules (GitHub, AWS, Slack, private keys, …) as candidates of the scan. */
import { createRequire } from 'node:module';
import type { lintSource as LintSource } from '@secretlint/core';
import { importEsm } from '@tos/sdk';
import type { Candidate, Severity } from './findings';

/** secretlint findings are `high` unless listed here by rule, or by rule and message id. */
const SECRETLINT_SEVERITIES: Readonly<Record<string, Severity>> = {
  privatekey: 'critical',
  gcp: 'critical',
  'aws/AWSSecretAccessKey': 'critical',
  'aws/AWSAccessKeyID': 'medium',
  'aws/AWSAccountID': 'low',
  'slack/IncomingWebhook': 'medium',
};

export interface Secretlint {
  lintSource: typeof LintSource;
  config: Parameters<typeof LintSource>[0]['options']['config'];
}

/** secretlint is published as ES modules only (see importEsm). */
let secretlint: Promise<Secretlint> | undefined;

export function loadSecretlint(): Promise<Secretlint> {
  secretlint ??= (async () => {
    const corePath = require.resolve('@secretlint/core');
    const presetPath = require.resolve('@secretlint/secretlint-rule-preset-recommend');
    // The copy of the profiler secretlint itself uses (resolved from @secretlint/core's location).
    const profilerPath = createRequire(corePath).resolve('@secretlint/profiler');
    const [core, preset, profiler] = (await Promise.all([corePath, presetPath, profilerPath].map((file) => importEsm(file)))) as [
      typeof import('@secretlint/core'),
      typeof import('@secretlint/secretlint-rule-preset-recommend'),
      { secretLintProfiler: { mark: (marker: unknown) => void } },
    ];
    // secretlint's always-on profiler adds ~50 performance marks per scanned text to the global
    // timeline and to an array it searches linearly: in a long-lived service memory grows
    // without bound and every scan gets slower. Nothing here reads the profile.
    profiler.secretLintProfiler.mark = () => undefined;
    return {
      lintSource: core.lintSource,
      config: {
        rules: [
          {
            id: '@secretlint/secretlint-rule-preset-recommend',
            rule: preset.creator,
            // AWS access key ids are only reported on request; a leaked id points at a leaked pair.
            rules: [{ id: '@secretlint/secretlint-rule-aws', options: { enableIDScanRule: true } }],
          },
        ],
      },
    };
  })();
  return secretlint;
}

export async function secretlintCandidates(text: string, file: string, engine: Secretlint): Promise<Candidate[]> {
  const result = await engine.lintSource({
    source: { content: text, filePath: file, ext: extensionOf(file), contentType: 'text' },
    // maskSecrets: secretlint's messages quote the secret; masked, they can be shown.
    options: { config: engine.config, maskSecrets: true, noPhysicFilePath: true },
  });
  return result.messages.map((message) => {
    const rule = message.ruleId.replace(/^@secretlint\/secretlint-rule-/, '');
    return {
      rule: `secretlint/${rule}/${message.messageId}`,
      severity: SECRETLINT_SEVERITIES[`${rule}/${message.messageId}`] ?? SECRETLINT_SEVERITIES[rule] ?? 'high',
      message: cleanMessage(message.message),
      start: message.range[0],
      end: message.range[1],
      tier: 0,
    };
  });
}

/** "found GitHub Token(*****): *****" -> "Found GitHub Token": the masked values say nothing. */
function cleanMessage(message: string): string {
  const text = message.replace(/\s*\(\*+\)/g, '').replace(/:\s*\*+\s*$/, '');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function extensionOf(file: string): string {
  const dot = file.lastIndexOf('.');
  return dot > file.lastIndexOf('/') ? file.slice(dot) : '';
}
