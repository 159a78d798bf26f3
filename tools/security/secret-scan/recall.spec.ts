import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runTool, toolFailure } from '@tos/sdk/testing';
import { loadGitleaksRules } from './gitleaks-engine';
import { scanHistory } from './history';
import { loadSecretlint } from './secretlint';
import { SecretScanTool } from './secret-scan.tool';

type Input = Parameters<SecretScanTool['execute']>[0];
type Output = Awaited<ReturnType<SecretScanTool['execute']>>;

const tool = new SecretScanTool();
const scanContent = async (content: string) => (await runTool<Output>(tool, { content })).findings.map((f) => [f.line, f.column, f.rule]);

/** Key material of a made-up PEM body: long enough for the rules (64+ characters between the markers). */
const PEM_BODY = 'MIIEowIBAAKCAQEA7bq98Wd3TESTfakeTESTfake0123456789q8Zr2LmX9vTp4WcY7nKdAbCdEfGh';
const AGE_KEY = `AGE-SECRET-KEY-1${'QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L'.repeat(2).slice(0, 58)}`;

describe('secret-scan recall', () => {
  describe('private keys in source', () => {
    it('finds a PEM in one string literal with escaped newlines', async () => {
      const content = `export const key = "-----BEGIN RSA PRIVATE KEY-----\\n${PEM_BODY}\\n-----END RSA PRIVATE KEY-----\\n";\n`;
      expect(await scanContent(content)).toEqual([[1, 21, 'gitleaks/private-key']]);
    });

    it('finds a PEM concatenated over several lines', async () => {
      const content = `const pem =\n  '-----BEGIN PRIVATE KEY-----\\n' +\n  '${PEM_BODY}\\n' +\n  '-----END PRIVATE KEY-----\\n';\n`;
      expect(await scanContent(content)).toEqual([[2, 4, 'gitleaks/private-key']]);
    });

    it('leaves a PEM header without key material alone', async () => {
      expect(await scanContent("if (text.startsWith('-----BEGIN RSA PRIVATE KEY-----')) return 'pem';\n")).toEqual([]);
    });
  });

  describe('key-value lines', () => {
    it('finds a value followed by a # comment', async () => {
      expect(await scanContent('DB_PASSWORD=Zq8xR2mLp9Tv4WcY7nKd # rotated monthly\n')).toEqual([[1, 13, 'tos/high-entropy-assignment']]);
    });

    it.each([
      ['.env', 'APP_KEY=base64:Q2hhbmdlTWVQbGVhc2U4Zr2LmX9vTp4WcY7nKd0==', 9],
      ['YAML', 'auth: 9fQ2vX7kLm4RtY8wZp3N', 7],
      ['JSON', '{ "secret": "Q8zR2mLx9VtP4wCy7NkD" }', 14],
      ['properties', 'mail.smtp.token=k3Jd9Qm2Xv7LpZ8wR4tY', 17],
      ['INI', 'credentials = Hq4Zr8Lm2Xv9Tp6WcY3n', 15],
    ])('finds a generic secret name in a %s line', async (_format, line, column) => {
      const findings = await scanContent(`${line}\n`);
      expect(findings).toHaveLength(1);
      expect(findings[0].slice(0, 2)).toEqual([1, column]);
    });

    it.each([
      ['a stand-in word', 'password: changeme'],
      ['a variable', 'password: ${DB_PASSWORD}'],
      ['an angle-bracket hint', 'token: <your-token>'],
      ['a template', 'api_token = "{{ vault_api_token }}"'],
      ['an example value', 'SECRET_KEY=example-Zq8xR2mLp9Tv4WcY'],
      ['a low-entropy value', 'api_key = "aaaaaaaaaaaaaaaaaaaa1"'],
      ['an environment lookup', 'const token = process.env.GITHUB_TOKEN;'],
    ])('reports nothing for %s', async (_case, line) => {
      expect(await scanContent(`${line}\n`)).toEqual([]);
    });
  });

  describe('include_passwords', () => {
    const withPasswords = async (content: string) => (await runTool<Output>(tool, { content, include_passwords: true })).findings.map((f) => [f.line, f.column, f.rule]);

    it('finds weak literal passwords in config shapes, and password hashes', async () => {
      const content = [
        'DB_PASSWORD=admin123 # local only',
        '"sshUserPassword" : "hunter22",',
        "define( 'DB_PASSWORD', 'admin' );",
        '<Pass>Swordfish9</Pass>',
        'machine smtp.example.com login me@example.com password pass123',
        "(1, 'rogers63', '$2y$12$s.YfVZdfvAuO/Iz6fte5iO..ZbbEgreZnDcYOGvX4NGJskYQIstcG', 1),",
      ].join('\n');
      expect(await withPasswords(content)).toEqual([
        [1, 13, 'tos/password-assignment'],
        [2, 22, 'tos/password-assignment'],
        [3, 25, 'tos/password-assignment'],
        [4, 7, 'tos/password-assignment'],
        [5, 56, 'tos/password-assignment'],
        [6, 18, 'tos/password-hash'],
      ]);
      expect(await scanContent(content)).toEqual([]); // off by default
    });

    it.each([
      ['a stand-in', 'password: changeme'],
      ['a variable', 'password = $DB_PASSWORD'],
      ['a call', 'password = getPassword(user)'],
      ['a boolean', 'promptForPass: false'],
      ['a field name', '"passwordField": "password",'],
      ['prose', 'Firefox saved password collection'],
      ['a bypass setting', '<BypassProxy>0000</BypassProxy>'],
      ['a lower-case key name', 'cache_key = "users-by-id"'],
    ])('reports nothing for %s', async (_case, line) => {
      expect(await withPasswords(`${line}\n`)).toEqual([]);
    });
  });

  describe("gitleaks's rules and allow-lists", () => {
    const ids = async (text: string, file = 'src/settings.txt') => (await loadGitleaksRules()).scan(text, file).map((match) => match.rule.id);

    it('runs the provider rules secretlint lacks, ahead of the generic rule on the same value', async () => {
      expect(await ids(`key: ${AGE_KEY}\n`)).toEqual(['age-secret-key', 'generic-api-key']);
      expect(await scanContent(`key: ${AGE_KEY}\n`)).toEqual([[1, 6, 'gitleaks/age-secret-key']]);
    });

    it('skips files its global allow-list names (lockfiles, vendored folders)', async () => {
      expect(await ids(`${AGE_KEY}\n`, 'yarn.lock')).toEqual([]);
      expect(await ids(`${AGE_KEY}\n`, 'app/vendor/modules.txt')).toEqual([]);
    });

    it("drops the generic rule's stopwords and allow-listed names", async () => {
      expect(await ids('api_key = "q8Zr2LmX9vTp4WcYw3"\n')).toEqual(['generic-api-key']);
      expect(await ids('api_key = "admin8Zr2LmX9vTp4WcY"\n')).toEqual([]); // stopword "admin"
      expect(await ids('public_key = "q8Zr2LmX9vTp4WcYw3"\n')).toEqual([]); // allow-listed name (regexTarget match)
    });

    it('applies entropy thresholds and the gitleaks:allow marker', async () => {
      expect(await ids('api_key = "abababababababab"\n')).toEqual([]);
      expect(await ids(`key: ${AGE_KEY} # gitleaks:allow\n`)).toEqual([]);
    });

    it('tries a rule only on lines holding one of its keywords', async () => {
      // airtable-personnal-access-token's pattern names no provider; its keyword "airtable" must be on the line.
      const token = `patAbCdEf12345678.${'0123456789abcdef'.repeat(4)}`;
      expect(await ids(`token ${token}\n`)).not.toContain('airtable-personnal-access-token');
      expect(await ids(`airtable ${token}\n`)).toContain('airtable-personnal-access-token');
      expect((await loadGitleaksRules()).count).toBe(221);
    });
  });

  describe('history', () => {
    let root: string;
    const commits: string[] = [];
    const scan = (input: Partial<Input>) => runTool<Output>(tool, { path: '.', history: true, ...input }, { workspaceRoot: root });

    beforeAll(async () => {
      const git = await import('isomorphic-git');
      root = fs.mkdtempSync(path.join(tmpdir(), 'secret-scan-history-'));
      const author = { name: 'Test', email: 'test@example.invalid', timestamp: 1_700_000_000, timezoneOffset: 0 };
      const commit = async (message: string, step: number) => {
        commits.push(await git.commit({ fs, dir: root, message, author: { ...author, timestamp: author.timestamp + step } }));
      };
      await git.init({ fs, dir: root });
      fs.writeFileSync(path.join(root, 'README.md'), '# app\n');
      await git.add({ fs, dir: root, filepath: 'README.md' });
      await commit('first', 0);
      fs.mkdirSync(path.join(root, 'config'));
      fs.writeFileSync(path.join(root, 'config/app.env'), 'DB_HOST=db\nDB_PASSWORD=Zq8xR2mLp9Tv4WcY7nKd\n');
      await git.add({ fs, dir: root, filepath: 'config/app.env' });
      await commit('add config', 1);
      fs.writeFileSync(path.join(root, 'config/app.env'), 'DB_HOST=db2\nDB_PASSWORD=Zq8xR2mLp9Tv4WcY7nKd\n');
      await git.add({ fs, dir: root, filepath: 'config/app.env' });
      await commit('move the database', 2);
      await git.remove({ fs, dir: root, filepath: 'config/app.env' });
      fs.rmSync(path.join(root, 'config'), { recursive: true });
      await commit('remove the secret', 3);
    });
    afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

    it('reports a secret removed since, once, at the commit that introduced it', async () => {
      const result = await scan({});
      expect(result.findings).toEqual([expect.objectContaining({ file: 'config/app.env', line: 2, column: 13, rule: 'tos/high-entropy-assignment', commit: commits[1] })]);
      expect(result).toMatchObject({ count: 1, commits_scanned: 4, files_scanned: 3, truncated: false });
    });

    it('stops at its time bound and says so', async () => {
      const [secretlint, gitleaks] = await Promise.all([loadSecretlint(), loadGitleaksRules()]);
      let clock = 0;
      // Each reading of the clock moves it 40 s: the second file version is past the 60 s bound.
      const scan = await scanHistory({
        gitdir: fs.realpathSync(path.join(root, '.git')),
        prefix: '',
        ref: 'HEAD',
        heuristics: { entropy: true, passwords: false },
        engines: { secretlint, gitleaks },
        maxFindings: 1000,
        signal: new AbortController().signal,
        now: () => (clock += 40_000),
      });
      expect(scan).toMatchObject({ truncated: true, blobs: 1, findings: [] });
    });

    it('walks from history_ref', async () => {
      expect((await scan({ history_ref: commits[0] })).findings).toEqual([]);
    });

    it('reads nothing through a link out of the .git folder', async () => {
      const linked = fs.mkdtempSync(path.join(tmpdir(), 'secret-scan-linked-'));
      try {
        // A repository whose objects folder is a link to the history repository's, outside its workspace.
        fs.mkdirSync(path.join(linked, '.git'));
        for (const name of ['HEAD', 'refs']) fs.cpSync(path.join(root, '.git', name), path.join(linked, '.git', name), { recursive: true });
        fs.symlinkSync(path.join(root, '.git', 'objects'), path.join(linked, '.git', 'objects'));
        const failure = await toolFailure(runTool(tool, { path: '.', history: true }, { workspaceRoot: linked }));
        expect(failure).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'path' }, message: expect.stringMatching(/could not be read inside/) });
        // The same through a chain: objects → hop (inside the workspace) → the history repository's objects.
        fs.unlinkSync(path.join(linked, '.git', 'objects'));
        fs.symlinkSync('hop', path.join(linked, '.git', 'objects'));
        fs.symlinkSync(path.join(root, '.git', 'objects'), path.join(linked, '.git', 'hop'));
        const chained = await toolFailure(runTool(tool, { path: '.', history: true }, { workspaceRoot: linked }));
        expect(chained).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'path' }, message: expect.stringMatching(/could not be read inside/) });
      } finally {
        fs.rmSync(linked, { recursive: true, force: true });
      }
    });

    it('reaches a secret on a merged branch, reported at the branch commit that planted it', async () => {
      const git = await import('isomorphic-git');
      const dir = fs.mkdtempSync(path.join(tmpdir(), 'secret-scan-merge-'));
      try {
        const author = (step: number) => ({ name: 'Test', email: 'test@example.invalid', timestamp: 1_700_000_000 + step, timezoneOffset: 0 });
        const commitFile = async (file: string, text: string, step: number) => {
          fs.writeFileSync(path.join(dir, file), text);
          await git.add({ fs, dir, filepath: file });
          return git.commit({ fs, dir, message: file, author: author(step) });
        };
        await git.init({ fs, dir, defaultBranch: 'main' });
        await commitFile('a.txt', 'a\n', 0);
        await git.branch({ fs, dir, ref: 'feature', checkout: true });
        const planted = await commitFile('b.env', 'API_TOKEN=Zq8xR2mLp9Tv4WcY7nKd\n', 1);
        await git.checkout({ fs, dir, ref: 'main' });
        await commitFile('c.txt', 'c\n', 2);
        await git.merge({ fs, dir, ours: 'main', theirs: 'feature', author: author(3) });
        const result = await runTool<Output>(tool, { path: '.', history: true }, { workspaceRoot: dir });
        expect(result.findings.map((f) => [f.file, f.line, f.commit])).toEqual([['b.env', 1, planted]]);
        expect(result.commits_scanned).toBe(4);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('refuses an unknown history_ref, a directory without .git, and inline content', async () => {
      expect(await toolFailure(scan({ history_ref: 'no-such-branch' }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'history_ref' } });
      expect(await toolFailure(runTool(tool, { path: '.', history: true }, { workspaceRoot: __dirname }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'path' } });
      expect(await toolFailure(runTool(tool, { content: 'x', history: true }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'history' } });
      expect(await toolFailure(scan({ ref: 'HEAD' }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'ref' } });
    });
  });
});
