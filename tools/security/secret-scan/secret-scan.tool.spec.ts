import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runTool, toolFailure, type RunToolOverrides } from '@tos/sdk/testing';
import { SecretScanTool } from './secret-scan.tool';

type Input = Parameters<SecretScanTool['execute']>[0];
type Output = Awaited<ReturnType<SecretScanTool['execute']>>;

const tool = new SecretScanTool();
const fixtures = path.join(__dirname, '../fixtures');
const scan = (input: Partial<Input>, overrides: RunToolOverrides = {}) => runTool<Output>(tool, input, { workspaceRoot: fixtures, ...overrides });

/** Every secret planted in fixtures/repo (the PEM by its key material). */
const PLANTED = {
  awsKeyId: 'AKIAZ7FAKEKEY0TEST42',
  awsSecret: 'fakeFAKEfake0000SECRETsecret1111TESTtest',
  github: 'ghp_FAKEfakeFAKEfake0123456789TESTtestXY',
  pem: 'MIIEowIBAAKCAQEAFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKE',
  slack: 'https://hooks.slack.com/services/TFAKE0000/BFAKE0000/FAKEfakeFAKEfake00000000',
  serviceKey: 'sk_svc_FAKEfakeFAKEfake0000000000TESTxx',
  password: 'q8Zr2LmX9vTp4WcY7nKd',
};

function expectNoSecretIn(output: unknown): void {
  const json = JSON.stringify(output);
  for (const secret of Object.values(PLANTED)) {
    expect(json).not.toContain(secret);
    expect(json).not.toContain(secret.slice(4, 14)); // nor a telling part of it
  }
}

describe('SecretScanTool', () => {
  it('finds every planted secret in a directory, redacted, sorted by file, line and column', async () => {
    const result = await scan({ path: 'repo' });
    expect(result.findings.map((f) => [f.file, f.line, f.column, f.rule, f.severity])).toEqual([
      ['repo/config/app.env', 3, 14, 'tos/high-entropy-assignment', 'medium'],
      ['repo/config/app.env', 4, 17, 'tos/api-key', 'critical'],
      ['repo/config/aws.ini', 4, 21, 'secretlint/aws/AWSAccessKeyID', 'medium'],
      ['repo/config/aws.ini', 5, 1, 'secretlint/aws/AWSSecretAccessKey', 'critical'],
      ['repo/deploy/notify.yaml', 4, 16, 'secretlint/slack/IncomingWebhook', 'medium'],
      ['repo/keys/deploy.pem', 1, 1, 'secretlint/privatekey/PrivateKey', 'critical'],
      ['repo/src/github.js', 3, 10, 'secretlint/github/GITHUB_TOKEN', 'high'],
    ]);
    expect(result).toMatchObject({ count: 7, truncated: false });
    // blob.bin is binary: skipped; clean.js is scanned and yields nothing.
    expect(result.files_scanned).toBe(6);
    expectNoSecretIn(result);
  });

  it('redacts to the first four characters and the length, with readable messages', async () => {
    const { findings } = await scan({ path: 'repo', files: ['src/github.js', 'config/app.env'] });
    expect(findings).toEqual([
      {
        rule: 'tos/high-entropy-assignment',
        severity: 'medium',
        file: 'repo/config/app.env',
        line: 3,
        column: 14,
        message: 'High-entropy value (4.32 bits/char) assigned to DB_PASSWORD',
        match: 'q8Zr**** (20 chars)',
      },
      {
        rule: 'tos/api-key',
        severity: 'critical',
        file: 'repo/config/app.env',
        line: 4,
        column: 17,
        message: 'Found a Tool Orchestration Service API key (svc)',
        match: 'sk_s**** (39 chars)',
      },
      {
        rule: 'secretlint/github/GITHUB_TOKEN',
        severity: 'high',
        file: 'repo/src/github.js',
        line: 3,
        column: 10,
        message: 'Found GitHub Token',
        match: 'ghp_**** (40 chars)',
      },
    ]);
  });

  it('scans only the listed `files` of a directory', async () => {
    const result = await scan({ path: 'repo', files: ['src'] });
    expect(result.files_scanned).toBe(2);
    expect(result.findings.map((f) => f.file)).toEqual(['repo/src/github.js']);
  });

  it('reports nothing for a clean file', async () => {
    await expect(scan({ path: 'repo/src/clean.js' })).resolves.toEqual({ findings: [], count: 0, files_scanned: 1, truncated: false });
  });

  describe('inline content', () => {
    it('reports findings against <content>', async () => {
      const result = await scan({ content: `token: ${PLANTED.github}\n` });
      expect(result).toMatchObject({ count: 1, files_scanned: 1, findings: [{ file: '<content>', line: 1, column: 8 }] });
      expectNoSecretIn(result);
    });

    it('drops the entropy rule when include_entropy is false', async () => {
      const content = `password = "${PLANTED.password}"\n`;
      expect((await scan({ content })).findings.map((f) => f.rule)).toEqual(['tos/high-entropy-assignment']);
      expect((await scan({ content, include_entropy: false })).findings).toEqual([]);
    });

    it('leaves low-entropy, letter-only and unnamed values alone', async () => {
      const content = [
        'password = "aaaaaaaaaaaaaaaaaaaa1"',
        'api_key = "correcthorsebatterystaple"',
        'build_id = "q8Zr2LmX9vTp4WcY7nKd"',
        'token = "short1x"',
      ].join('\n');
      expect((await scan({ content })).findings).toEqual([]);
    });

    it('reports a value found by several rules once, by the most specific rule', async () => {
      const result = await scan({ content: `api_token = "${PLANTED.serviceKey}"\naws_secret_access_key="${PLANTED.awsSecret}"\n` });
      expect(result.findings.map((f) => [f.line, f.rule])).toEqual([
        [1, 'tos/api-key'],
        [2, 'secretlint/aws/AWSSecretAccessKey'],
      ]);
    });

    it('recognises every service key type and no longer or shorter lookalikes', async () => {
      const body = 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6';
      const content = [`sk_user_${body}`, `sk_temp_${body}`, `sk_svc_${body}X`, `sk_svc_${body.slice(1)}`, `xsk_svc_${body}`].join('\n');
      const result = await scan({ content, include_entropy: false });
      expect(result.findings.map((f) => [f.line, f.message])).toEqual([
        [1, 'Found a Tool Orchestration Service API key (user)'],
        [2, 'Found a Tool Orchestration Service API key (temp)'],
      ]);
    });

    it('caps the findings at 1000 and says so', async () => {
      const content = Array.from({ length: 1005 }, (_, i) => `sk_svc_${String(i).padStart(32, 'k')}`).join('\n');
      const result = await scan({ content });
      expect(result).toMatchObject({ count: 1000, truncated: true });
      expect(result.findings).toHaveLength(1000);
      expect(result.findings[999].line).toBe(1000);
    });
  });

  describe('bad input', () => {
    it.each([
      [{ content: 'x', path: 'repo' }, 'path', /give exactly one of 'content' or 'path'/],
      [{ content: 'x', files: ['a'] }, 'files', /Invalid value for parameter 'files'/],
      [{ path: 'repo/src/clean.js', files: ['a'] }, 'files', /directory/],
      [{ path: '../secret-scan.tool.ts' }, 'path', /escapes the workspace/],
      [{ path: '/etc' }, 'path', /absolute/],
      [{ path: 'repo', files: ['../../secret-scan.tool.ts'] }, 'files', /escapes the listed directory/],
      [{ path: 'repo/missing' }, 'path', /No such file or directory in the workspace: repo\/missing/],
    ])('%j is INVALID_INPUT naming %s', async (input, parameter, message) => {
      expect(await toolFailure(scan(input))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter }, message: expect.stringMatching(message) });
    });
  });

  describe('large directories', () => {
    let root: string;
    beforeAll(() => {
      root = mkdtempSync(path.join(tmpdir(), 'secret-scan-'));
      for (let i = 0; i < 40; i++) writeFileSync(path.join(root, `file-${String(i).padStart(2, '0')}.txt`), `line ${i}\n`);
    });
    afterAll(() => rmSync(root, { recursive: true, force: true }));

    it('reports progress', async () => {
      const percents: number[] = [];
      await expect(scan({ path: '.' }, { workspaceRoot: root, onProgress: (percent) => percents.push(percent) })).resolves.toMatchObject({ files_scanned: 40, count: 0 });
      expect(percents).toEqual([10, 20, 30, 40, 50, 60, 70, 80, 90]);
    });

    it('stops between files when the signal aborts', async () => {
      const controller = new AbortController();
      let filesReported = 0;
      const onProgress = () => {
        filesReported += 1;
        controller.abort();
      };
      await expect(scan({ path: '.' }, { workspaceRoot: root, signal: controller.signal, onProgress })).rejects.toMatchObject({ name: 'AbortError' });
      expect(filesReported).toBe(1);
    });

    it('refuses directories with more than 5000 files', async () => {
      const big = mkdtempSync(path.join(tmpdir(), 'secret-scan-big-'));
      try {
        for (let i = 0; i <= 5000; i++) writeFileSync(path.join(big, `f${i}`), '');
        expect(await toolFailure(scan({ path: '.' }, { workspaceRoot: big }))).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/More than 5000 files/) });
      } finally {
        rmSync(big, { recursive: true, force: true });
      }
    });
  });
});
