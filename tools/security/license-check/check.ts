/** license-check's work: the licence of every locked package, judged by an allow/deny policy. */
import { compareText, countBy, tally, type ToolContext } from '@tos/sdk';
import { installedLicenses, type KnownLicense, type LicenseSource } from '../../shared/licenses/installed';
import { NpmRegistryLicenses } from '../../integrations/npm-registry';
import { checkPolicy, judge, LICENSE_STATUSES, type LicenseStatus } from '../../shared/licenses/policy';
import { findLockfiles, readLockfile, type Lockfile, type LockfileFormat } from '../../shared/lockfiles';
import { firstResults } from '../../shared/scan';
import type { LicenseCheckInput, LicenseCheckOutput } from './license-check.tool';

/** Distinct licences listed in the output, most used first. */
export const MAX_LICENSES_LISTED = 100;
/** Worst first in the list of violations. */
const STATUS_ORDER: readonly LicenseStatus[] = ['denied', 'unapproved', 'invalid', 'unknown', 'allowed'];

export interface LicenseFinding {
  package: string;
  version: string;
  ecosystem: string;
  license: string | null;
  status: LicenseStatus;
  reason: string;
  source: LicenseSource | null;
  file: string;
  direct: boolean;
  dev: boolean;
}

export async function licenseCheck(input: LicenseCheckInput, ctx: ToolContext): Promise<LicenseCheckOutput> {
  const policy = { allow: input.allow, deny: input.deny };
  checkPolicy(policy);
  const files = await findLockfiles(ctx.workspace, input.path);
  const checked: Array<{ lockfile: Lockfile; known: Map<string, KnownLicense> }> = [];
  for (const [index, file] of files.entries()) {
    const lockfile = await readLockfile(ctx.workspace, file);
    checked.push({ lockfile, known: await installedLicenses(ctx.workspace, lockfile, ctx.signal) });
    ctx.progress(Math.round(((index + 1) / files.length) * 50), `${file} read`);
  }
  const warnings = input.registry_lookup ? await fillFromRegistry(checked, input, ctx) : [];
  ctx.progress(90, 'judging licences');

  const findings: LicenseFinding[] = [];
  for (const { lockfile, known } of checked) {
    for (const entry of lockfile.packages) {
      if (entry.dev && !input.include_dev) continue;
      const found = known.get(entry.key);
      findings.push({
        package: entry.name,
        version: entry.version,
        ecosystem: lockfile.ecosystem,
        license: found?.license ?? null,
        ...judge(found?.license, policy),
        source: found?.source ?? null,
        file: lockfile.file,
        direct: entry.direct,
        dev: entry.dev,
      });
    }
  }
  const violations = findings
    .filter((finding) => finding.status !== 'allowed')
    .sort((a, b) => STATUS_ORDER.indexOf(a.status) - STATUS_ORDER.indexOf(b.status) || compareText(a.package, b.package) || compareText(a.version, b.version) || compareText(a.file, b.file));
  const { items: returned, ...page } = firstResults(violations, input.max_results);
  ctx.progress(100, `${violations.length} violation(s) in ${findings.length} package(s)`);
  return {
    passed: violations.length === 0,
    violations: returned,
    ...page,
    summary: countBy(LICENSE_STATUSES, findings, (finding) => finding.status),
    licenses: licenseCounts(findings),
    packages_checked: findings.length,
    lockfiles: checked.map(({ lockfile }) => ({ file: lockfile.file, format: lockfile.format, ecosystem: lockfile.ecosystem, packages: lockfile.packages.length })),
    warnings,
  };
}

/**
 * npm packages whose licence the workspace does not record, asked of the registry once each. A
 * registry that cannot be reached leaves the rest unknown, with a warning: the call still answers.
 */
async function fillFromRegistry(checked: Array<{ lockfile: Lockfile; known: Map<string, KnownLicense> }>, input: LicenseCheckInput, ctx: ToolContext): Promise<string[]> {
  const missing = new Map<string, { name: string; version: string }>();
  for (const { lockfile, known } of checked) {
    if (lockfile.ecosystem !== 'npm') continue;
    for (const entry of lockfile.packages) {
      if ((entry.dev && !input.include_dev) || known.has(entry.key)) continue;
      missing.set(entry.key, { name: entry.name, version: entry.version });
    }
  }
  if (missing.size === 0) return [];
  // The account's own token when it set one, else the operator's (a declared secret setting).
  const token = await ctx.secrets.find('REGISTRY_TOKEN');
  const registry = new NpmRegistryLicenses(ctx.http, String(ctx.config.REGISTRY_URL), token);
  const { licenses: published, unreachable } = await registry.licenses([...missing.values()]);
  for (const { lockfile, known } of checked) {
    for (const entry of lockfile.packages) {
      const license = lockfile.ecosystem === 'npm' && !known.has(entry.key) ? published.get(entry.key) : undefined;
      if (license) known.set(entry.key, { license, source: 'registry' });
    }
  }
  if (!unreachable) return [];
  const unanswered = [...missing.keys()].filter((key) => !published.has(key)).length;
  return [`The npm registry (REGISTRY_URL) could not be reached (${unreachable.message}): ${unanswered} package(s) without a licence in the workspace are reported unknown`];
}

function licenseCounts(findings: LicenseFinding[]): Array<{ license: string; packages: number }> {
  const counts = tally(findings.flatMap((finding) => finding.license ?? []), (license) => license);
  return [...counts.entries()]
    .map(([license, packages]) => ({ license, packages }))
    .sort((a, b) => b.packages - a.packages || compareText(a.license, b.license))
    .slice(0, MAX_LICENSES_LISTED);
}
