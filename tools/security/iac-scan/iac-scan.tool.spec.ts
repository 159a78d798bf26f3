import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runTool } from '@tos/sdk/testing';
import { buildCodeWorkspace } from '../../../test/support/code-tools/workspace';
import { IacScanTool } from './iac-scan.tool';
import { IAC_RULE_IDS } from './rules';
import type { IacScanOutput } from './iac-scan.tool';

let root: string;
beforeAll(() => (root = buildCodeWorkspace(mkdtempSync(path.join(tmpdir(), 'iac-scan-')))));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const scan = (input: Record<string, unknown>, signal?: AbortSignal, onProgress?: () => void) =>
  runTool<IacScanOutput>(IacScanTool, input, { workspaceRoot: root, signal, onProgress });

describe('IacScanTool', () => {

  it('fires every rule on the insecure fixtures and none on the hardened ones', async () => {
    const all = await scan({ path: 'code/iac' });
    expect(new Set(all.findings.map((finding) => finding.rule))).toEqual(new Set(IAC_RULE_IDS));
    expect(IAC_RULE_IDS.length).toBeGreaterThanOrEqual(20);
    const hardened = await scan({ path: 'code/iac', files: ['k8s/hardened-deployment.yaml', 'docker/Dockerfile'] });
    expect(hardened).toMatchObject({ findings: [], files_scanned: 2 });
  });

  it('points at the line of the field at fault, or of the object missing it', async () => {
    const { findings } = await scan({ path: 'code/iac/k8s/debug-pod.yaml' });
    const lines = Object.fromEntries(findings.map((finding) => [finding.rule, finding.line]));
    expect(lines).toEqual({
      'k8s/host-ipc': 7,
      'k8s/allow-privilege-escalation': 9, // no securityContext: the container's first line
      'k8s/run-as-non-root-unset': 9,
      'k8s/writable-root-filesystem': 9,
      'k8s/capabilities-not-dropped': 9,
      'k8s/seccomp-unconfined': 9,
      'k8s/missing-liveness-probe': 9,
      'k8s/missing-readiness-probe': 9,
    });
    expect(findings.find((finding) => finding.rule === 'k8s/host-ipc')).toMatchObject({ object: 'Pod/debug-shell', severity: 'high' });
  });

  it('skips rules and severities on request, and caps the list keeping the worst', async () => {
    const skipped = await scan({ path: 'code/iac/docker', skip_rules: ['dockerfile/no-user', 'dockerfile/missing-healthcheck'] });
    expect(skipped.findings.some((finding) => finding.rule === 'dockerfile/no-user')).toBe(false);
    expect(skipped.findings.some((finding) => finding.rule === 'dockerfile/curl-pipe-shell')).toBe(true);
    expect(skipped.findings.some((finding) => finding.rule === 'dockerfile/missing-healthcheck')).toBe(false);
    const capped = await scan({ path: 'code/iac', max_results: 1 });
    expect(capped).toMatchObject({ count: 1, truncated: true, findings: [{ rule: 'k8s/privileged-container', severity: 'critical' }] });
    expect(capped.total).toBe(capped.summary.critical! + capped.summary.high! + capped.summary.medium! + capped.summary.low!);
  });

  it('lists a manifest over the size limit in errors and scans the rest', async () => {
    mkdirSync(path.join(root, 'large'));
    writeFileSync(path.join(root, 'large/crds.yaml'), `# generated\n${'x'.repeat(2 * 1024 * 1024)}\n`);
    copyFileSync(path.join(root, 'code/iac/k8s/debug-pod.yaml'), path.join(root, 'large/pod.yaml'));
    const output = await scan({ path: 'large' });
    expect(output).toMatchObject({ files_scanned: 1, errors: [{ file: 'large/crds.yaml', message: expect.stringMatching(/^Not scanned: \d+ bytes, over the limit of 2097152$/) }] });
    expect(output.total).toBeGreaterThan(0);
  });

  it('refuses bad input naming the parameter', async () => {
    await expect(scan({ path: '/etc' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'path' } });
    await expect(scan({ path: 'code/iac/missing.yaml' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'path' } });
    await expect(scan({ path: 'code/iac', skip_rules: ['k8s/no-such-rule'] })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'skip_rules[0]' } });
    await expect(scan({ path: 'code/iac', files: ['../../etc/passwd'] })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'files' } });
  });

  it('stops when cancelled between files', async () => {
    const many = path.join(root, 'many');
    mkdirSync(many);
    for (let index = 0; index < 200; index += 1) copyFileSync(path.join(root, 'code/iac/k8s/insecure-deployment.yaml'), path.join(many, `app-${index}.yaml`));
    const controller = new AbortController();
    const progress: number[] = [];
    const running = scan({ path: 'many' }, controller.signal, () => {
      progress.push(1);
      if (progress.length === 2) controller.abort(new Error('cancelled'));
    });
    await expect(running).rejects.toThrow('cancelled');
    expect(progress.length).toBe(2);
  });
});
