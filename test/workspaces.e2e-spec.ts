/**
 * Workspaces a remote client uploads (POST /v1/workspaces): checked archives stored per account in
 * the database, opened as a code tool's workspace by whichever process runs the call — in the
 * distributed engine, a worker process that unpacks the archive from PostgreSQL itself.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import { tar, type TarEntry } from './support/tar';
import { zip } from './support/zip';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { TIER_LIMITS, type Tier } from '../src/identity/tiers';
import { AccountsService } from '../src/keys/accounts.service';
import { WorkspacesService } from '../src/workspaces/workspaces.service';
import { useTestApp, type TestAccount } from './support/app';
import { describeEachEngine, ENGINE_MODES } from './support/engines';
import { startGitServer, type GitServer } from './support/git-server';
import { until } from './support/poll';
import { killProcess, startServiceProcess, type ServiceProcess } from './support/processes';

const LIMITS = { WORKSPACE_MAX_BYTES: String(256 * 1024), WORKSPACE_MAX_UNPACKED_BYTES: String(1024 * 1024), WORKSPACE_MAX_FILES: '50' };

const tarGz = async (entries: TarEntry[]) => gzipSync(await tar(entries));

const DOCKERFILE = 'FROM node:latest\nRUN curl -fsSL https://example.test/install.sh | sh\n';
const PROJECT: TarEntry[] = [
  { name: 'app/', type: 'directory' },
  { name: 'app/Dockerfile', body: DOCKERFILE },
  { name: 'app/src/index.js', body: 'module.exports = (req) => eval(req.query.code);\n' },
  { name: 'app/current', type: 'symlink', linkname: 'src' },
];

/** A git repository with two commits of app/Dockerfile (tag v1 on the first), in a new temp folder. */
function gitRepository(tweak?: (dir: string) => void): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'tos-git-project-'));
  const run = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.test', '-c', 'init.defaultBranch=main', ...args], { cwd: dir, stdio: 'pipe' });
  run('init', '-q');
  mkdirSync(path.join(dir, 'app'));
  writeFileSync(path.join(dir, 'app/Dockerfile'), DOCKERFILE);
  run('add', '.');
  run('commit', '-qm', 'first');
  run('tag', 'v1');
  writeFileSync(path.join(dir, 'app/Dockerfile'), 'FROM scratch\nCOPY app /app\nUSER 10001\nHEALTHCHECK CMD ["/app", "--health"]\n');
  run('commit', '-qam', 'second');
  tweak?.(dir);
  return dir;
}

/** That repository as a .tar.gz with its .git. */
function gitProject(tweak?: (dir: string) => void): Buffer {
  const dir = gitRepository(tweak);
  try {
    return execFileSync('tar', ['czf', '-', '-C', dir, '.']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Ten folders deep: where the link chain below starts, so each of its links looks harmless lexically. */
const DEEP = Array.from({ length: 10 }, (_, index) => `d${index}`).join('/');
const climbs = (levels: number) => Array.from({ length: levels }, () => '..').join('/');

/**
 * A link chain that once wrote outside the tree: `up` points (lexically) at the tree's root, `up/e` eleven levels up from
 * `up` (lexically the root again, but on disk `/`), and a file under `up/e/` lands at `file` on the host.
 */
function linkChain(file: string): Array<{ name: string; link?: string; body?: string }> {
  return [
    { name: `${DEEP}/up`, link: climbs(10) },
    { name: `${DEEP}/up/e`, link: climbs(11) },
    { name: `${DEEP}/up/e/${path.relative('/', file)}`, body: 'planted by a workspace archive\n' },
  ];
}

/** A fresh path outside every cache folder that the attacks aim at; the tests assert it never appears. */
function canary(): string {
  return path.join(tmpdir(), `tos-canary-${process.pid}-${Math.random().toString(36).slice(2)}`, 'planted');
}

/** A git repository (a new temp folder) whose one commit holds the link chain, as `git mktree` lets a hostile tree be written. */
function chainRepository(file: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'tos-git-chain-'));
  const git = (args: string[], input?: string) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.test', ...args], { cwd: dir, input, stdio: 'pipe' }).toString('utf8').trim();
  try {
    git(['init', '-q']);
    // Built from the innermost folder out: each level a tree naming the one inside it.
    let entry = `100644 blob ${git(['hash-object', '-w', '--stdin'], 'planted through a ref\n')}\t${path.basename(file)}`;
    const folders = [...DEEP.split('/'), 'up', 'e', ...path.relative('/', path.dirname(file)).split('/')];
    for (let index = folders.length - 1; index >= 0; index -= 1) {
      const links = { up: climbs(10), e: climbs(11) } as Record<string, string>;
      const link = folders[index + 1] !== undefined && links[folders[index + 1]];
      const lines = [entry, ...(link ? [`120000 blob ${git(['hash-object', '-w', '--stdin'], link)}\t${folders[index + 1]}`] : [])];
      entry = `040000 tree ${git(['mktree'], lines.join('\n') + '\n')}\t${folders[index]}`;
    }
    const root = git(['mktree'], entry + '\n');
    git(['update-ref', 'refs/heads/main', git(['commit-tree', root, '-m', 'chain'])]);
    git(['symbolic-ref', 'HEAD', 'refs/heads/main']);
    return dir;
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** That repository as a .tar.gz of its .git. */
function gitProjectWithChain(file: string): Buffer {
  const dir = chainRepository(file);
  try {
    return execFileSync('tar', ['czf', '-', '-C', dir, '.git']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describeEachEngine('workspaces', (mode) => {
  const suite = useTestApp(mode, { env: LIMITS });
  let other: TestAccount;
  beforeAll(async () => (other = await suite.t.createAccount('globex')));

  const upload = (body: Buffer, contentType = 'application/gzip', key = suite.acme.key) =>
    suite.t.request({ method: 'POST', url: '/v1/workspaces', key, headers: { 'content-type': contentType }, payload: body });
  const invoke = (tool: string, inputs: Record<string, unknown>, key = suite.acme.key) =>
    suite.t.request({ method: 'POST', url: `/v1/tools/${tool}/invoke`, key, payload: { inputs } });

  it('takes a .tar.gz, lists it, and a code tool reads it by id (symlinks inside the tree kept)', async () => {
    const res = await upload(await tarGz(PROJECT));
    expect(res.statusCode).toBe(201);
    const workspace = res.json();
    expect(workspace).toMatchObject({ id: expect.stringMatching(/^ws_[0-9A-Za-z]{20}$/), format: 'tar.gz', files: 3, digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    expect(workspace.bytes).toBe(Buffer.byteLength(DOCKERFILE) + Buffer.byteLength('module.exports = (req) => eval(req.query.code);\n'));
    expect(Date.parse(workspace.expires_at) - Date.parse(workspace.created_at)).toBe(3600_000);

    const listed = await suite.t.request({ method: 'GET', url: '/v1/workspaces', key: suite.acme.key });
    expect(listed.json()).toMatchObject({ workspaces: [workspace], total: 1, limit: 50, offset: 0 });
    expect((await suite.t.request({ method: 'GET', url: `/v1/workspaces/${workspace.id}`, key: suite.acme.key })).json()).toEqual(workspace);

    const iac = await invoke('iac-scan', { workspace: workspace.id, path: 'app' });
    expect(iac.statusCode).toBe(200);
    expect(iac.json().result.findings.map((finding: { rule: string; file: string }) => `${finding.rule} ${finding.file}`)).toEqual(
      expect.arrayContaining(['dockerfile/curl-pipe-shell app/Dockerfile', 'dockerfile/base-image-latest-or-untagged app/Dockerfile']),
    );
    const sast = await invoke('sast-scan', { workspace: workspace.id, path: 'app/current' });
    expect(sast.json().result).toMatchObject({ files_scanned: 1, findings: [{ rule: 'security/detect-eval-with-expression', file: 'app/current/index.js' }, { rule: 'taint/code-injection', flow: [{ note: 'source: req.query.code' }, { note: 'sink: eval()' }] }, { rule: 'no-eval' }] });
    // The shared WORKSPACE_ROOT has no `app`: the id, not the path, chose where to read.
    expect((await invoke('iac-scan', { path: 'app' })).json().error).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'path' } });
  });

  it('takes a .zip (and tells an octet-stream body by its magic bytes)', async () => {
    const body = await zip([{ name: 'reports/junit.xml', body: '<testsuite name="s"><testcase name="a"/><testcase name="b"><failure message="no"/></testcase></testsuite>' }]);
    const res = await upload(body, 'application/octet-stream');
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ format: 'zip', files: 1 });
    const report = await invoke('test-report', { workspace: res.json().id, path: 'reports' });
    expect(report.json().result.totals).toMatchObject({ tests: 2, passed: 1, failed: 1 });
  });

  it.each([
    ['a path with ..', () => tarGz([{ name: '../evil.sh', body: 'x' }]), /climbs out of the workspace/],
    ['an absolute path', () => tarGz([{ name: '/etc/cron.d/evil', body: 'x' }]), /absolute path/],
    ['a symlink out of the tree', () => tarGz([{ name: 'a/passwd', type: 'symlink', linkname: '../../etc/passwd' }]), /points out of the workspace/],
    ['an absolute symlink', () => tarGz([{ name: 'passwd', type: 'symlink', linkname: '/etc/passwd' }]), /points out of the workspace/],
    ['a hard link', () => tarGz([{ name: 'a', body: 'x' }, { name: 'b', type: 'link', linkname: 'a' }]), /is a link/],
    ['a character device', () => tarGz([{ name: 'null', type: 'character-device', devmajor: 1, devminor: 3 }]), /is a character-device/],
    ['a FIFO', () => tarGz([{ name: 'pipe', type: 'fifo' }]), /is a fifo/],
    ['a gzip bomb (5 MiB of zeros in 5 KiB)', () => tarGz([{ name: 'zeros', body: Buffer.alloc(5 * 1024 * 1024) }]), /More than 1048576 bytes unpacked/],
    ['too many files', () => tarGz(Array.from({ length: 51 }, (_, index) => ({ name: `f${index}`, body: 'x' }))), /More than 50 files/],
    ['a zip bomb', () => zip([{ name: 'zeros', body: Buffer.alloc(5 * 1024 * 1024) }]), /More than 1048576 bytes unpacked/],
    ['a zip entry climbing out', () => zip([{ name: 'a/../../evil', body: 'x' }]), /Not a readable \.zip|climbs out/],
    ['a zip symlink out of the tree', () => zip([{ name: 'link', body: '../../etc/passwd', mode: 0o120777 }]), /points out of the workspace/],
    ['a corrupt archive', async () => Buffer.concat([Buffer.from([0x1f, 0x8b]), Buffer.alloc(64, 7)]), /Not a readable \.tar\.gz/],
  ])('refuses %s with INVALID_INPUT and stores nothing', async (_name, build, message) => {
    const before = (await suite.t.request({ method: 'GET', url: '/v1/workspaces', key: suite.acme.key })).json().total;
    const body = await build();
    const res = await upload(body, body[0] === 0x50 ? 'application/zip' : 'application/gzip');
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(message), details: { parameter: 'body' } });
    expect((await suite.t.request({ method: 'GET', url: '/v1/workspaces', key: suite.acme.key })).json().total).toBe(before);
  });

  describe('a chain of links that each look harmless', () => {
    const refusedUpload = (res: { statusCode: number; json(): { error: unknown } }) => {
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/through the link/), details: { parameter: 'body' } });
    };

    it('in a .tar.gz is refused at upload, and no code tool ever writes through it', async () => {
      const file = canary();
      const chain = linkChain(file).map(({ name, link, body }) => (link ? { name, type: 'symlink' as const, linkname: link } : { name, body }));
      refusedUpload(await upload(await tarGz(chain)));
      expect(existsSync(file)).toBe(false);
    });

    it('in a .zip is refused at upload', async () => {
      const file = canary();
      refusedUpload(await upload(await zip(linkChain(file).map(({ name, link, body }) => (link ? { name, body: link, mode: 0o120777 } : { name, body: body! }))), 'application/zip'));
      expect(existsSync(file)).toBe(false);
    });

    it('in a commit read through `ref` is refused before anything is written', async () => {
      const file = canary();
      const res = await upload(gitProjectWithChain(file));
      expect(res.statusCode).toBe(201);
      const scan = await invoke('secret-scan', { workspace: res.json().id, path: '.', ref: 'main' });
      expect(scan.statusCode).toBe(400);
      expect(scan.json().error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/through the link/), details: { parameter: 'ref' } });
      expect(existsSync(file)).toBe(false);
      expect(existsSync(path.dirname(file))).toBe(false);
    });

    it('stops a commit whose tree inflates past WORKSPACE_MAX_UNPACKED_BYTES while git writes it, never holding it in memory', async () => {
      const inflating = gitProject((dir) => {
        writeFileSync(path.join(dir, 'zeros.bin'), Buffer.alloc(2 * 1024 * 1024));
        execFileSync('git', ['add', 'zeros.bin'], { cwd: dir });
        execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.test', 'commit', '-qm', 'zeros'], { cwd: dir });
        rmSync(path.join(dir, 'zeros.bin'));
      });
      const res = await invoke('iac-scan', { workspace: (await upload(inflating)).json().id, path: 'app', ref: 'HEAD' });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('larger than WORKSPACE_MAX_UNPACKED_BYTES'), details: { parameter: 'ref' } });
    });

    it("reads `ref` only through the repository's own folders and files, never a link in .git", async () => {
      const linked = gitProject((dir) => {
        execFileSync('mv', [path.join(dir, '.git/objects'), path.join(dir, 'objects-elsewhere')]);
        symlinkSync('../objects-elsewhere', path.join(dir, '.git/objects'));
      });
      const res = await invoke('iac-scan', { workspace: (await upload(linked)).json().id, path: 'app', ref: 'HEAD' });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('.git/objects is not a plain folder or file'), details: { parameter: 'ref' } });
    });
  });

  it('refuses a body over WORKSPACE_MAX_BYTES (413), a body that is no archive, JSON, and archives elsewhere (415)', async () => {
    const big = await upload(Buffer.alloc(300 * 1024, 1), 'application/zip');
    expect(big.statusCode).toBe(413);
    expect(big.json().error.code).toBe('INVALID_REQUEST');
    expect((await upload(Buffer.from('plain text here'), 'application/octet-stream')).json().error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('neither') });
    const json = await suite.t.request({ method: 'POST', url: '/v1/workspaces', key: suite.acme.key, payload: { git_url: 'x' } });
    expect(json.statusCode).toBe(400);
    const elsewhere = await suite.t.request({ method: 'POST', url: '/v1/tools/iac-scan/invoke', key: suite.acme.key, headers: { 'content-type': 'application/gzip' }, payload: await tarGz(PROJECT) });
    expect(elsewhere.statusCode).toBe(415);
    expect(elsewhere.json().error).toMatchObject({ code: 'INVALID_REQUEST', message: 'Unsupported Content-Type: request bodies must be application/json' });
  });

  it('keeps each account to its own workspaces, and honours the scopes', async () => {
    const id = (await upload(await tarGz(PROJECT))).json().id;
    expect((await suite.t.request({ method: 'GET', url: `/v1/workspaces/${id}`, key: other.key })).statusCode).toBe(404);
    expect((await suite.t.request({ method: 'DELETE', url: `/v1/workspaces/${id}`, key: other.key })).statusCode).toBe(404);
    const borrowed = await invoke('iac-scan', { workspace: id, path: 'app' }, other.key);
    expect(borrowed.statusCode).toBe(404);
    expect(borrowed.json().error).toMatchObject({ code: 'NOT_FOUND', message: `Workspace not found: ${id}` });
    expect((await suite.t.request({ method: 'GET', url: '/v1/workspaces', key: other.key })).json().total).toBe(0);

    const readOnly = await suite.t.createKey(suite.acme.id, { name: 'reader', type: 'service', scopes: ['tools:invoke', 'workspaces:read'] });
    expect((await upload(await tarGz(PROJECT), 'application/gzip', readOnly)).statusCode).toBe(403);
    expect((await suite.t.request({ method: 'GET', url: `/v1/workspaces/${id}`, key: readOnly })).statusCode).toBe(200);
    expect((await suite.t.request({ method: 'DELETE', url: `/v1/workspaces/${id}`, key: readOnly })).statusCode).toBe(403);

    expect((await suite.t.request({ method: 'DELETE', url: `/v1/workspaces/${id}`, key: suite.acme.key })).statusCode).toBe(204);
    expect((await suite.t.request({ method: 'GET', url: `/v1/workspaces/${id}`, key: suite.acme.key })).statusCode).toBe(404);
    expect((await invoke('iac-scan', { workspace: id, path: 'app' })).statusCode).toBe(404);
    expect((await invoke('iac-scan', { workspace: 'ws_short', path: 'app' })).json().error).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'workspace' } });
  });

  it('reads files at a git ref of the workspace without touching its work tree', async () => {
    const id = (await upload(gitProject())).json().id;
    const rules = async (ref?: string) => {
      const res = await invoke('iac-scan', { workspace: id, path: 'app', ...(ref && { ref }) });
      expect(res.statusCode).toBe(200);
      return res.json().result.findings.map((finding: { rule: string }) => finding.rule);
    };
    expect(await rules('HEAD~1')).toContain('dockerfile/curl-pipe-shell');
    expect(await rules('v1')).toContain('dockerfile/curl-pipe-shell');
    expect(await rules('main')).not.toContain('dockerfile/curl-pipe-shell');
    expect(await rules()).not.toContain('dockerfile/curl-pipe-shell'); // the work tree is still the second commit

    for (const ref of ['no-such-branch', '--output=/tmp/x', 'a b']) {
      const res = await invoke('iac-scan', { workspace: id, path: 'app', ref });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'ref' } });
    }
    const plain = (await upload(await tarGz(PROJECT))).json().id;
    expect((await invoke('iac-scan', { workspace: plain, path: 'app', ref: 'HEAD' })).json().error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('not a git repository') });
  });

  it("never runs a workspace repository's own git config, and refuses one that borrows objects", async () => {
    const marker = path.join(tmpdir(), `tos-smudge-ran-${process.pid}-${Date.now()}`);
    const hostile = gitProject((dir) => {
      writeFileSync(path.join(dir, '.gitattributes'), '* filter=evil\n');
      execFileSync('git', ['add', '.gitattributes'], { cwd: dir });
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.test', 'commit', '-qm', 'attributes'], { cwd: dir });
      execFileSync('git', ['config', 'filter.evil.smudge', `touch ${marker}; cat`], { cwd: dir });
      execFileSync('git', ['config', 'core.fsmonitor', `touch ${marker}`], { cwd: dir });
    });
    rmSync(marker, { force: true });
    const id = (await upload(hostile)).json().id;
    const res = await invoke('iac-scan', { workspace: id, path: 'app', ref: 'HEAD~2' });
    expect(res.json().result.findings.map((finding: { rule: string }) => finding.rule)).toContain('dockerfile/curl-pipe-shell');
    expect(existsSync(marker)).toBe(false);

    const borrowing = (await upload(gitProject((dir) => writeFileSync(path.join(dir, '.git/objects/info/alternates'), '/tmp/elsewhere/objects\n')))).json().id;
    expect((await invoke('iac-scan', { workspace: borrowing, path: 'app', ref: 'HEAD' })).json().error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('alternates') });
  });

  it('refuses a clone the egress policy forbids before git sends anything, and URLs it cannot take', async () => {
    const server = await startGitServer(tmpdir());
    try {
      const clone = (payload: Record<string, unknown>) => suite.t.request({ method: 'POST', url: '/v1/workspaces', key: suite.acme.key, payload });
      const loopback = await clone({ git_url: `${server.url}/app.git` });
      expect(loopback.statusCode).toBe(400);
      expect(loopback.json().error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('loopback'), details: { parameter: 'git_url' } });
      expect(server.requests).toEqual([]);
      expect((await clone({ git_url: 'ssh://git@example.test/app.git' })).json().error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('ssh:') });
      expect((await clone({ git_url: 'https://user:token@example.test/app.git' })).json().error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('credentials') });
      expect((await clone({ git_url: `${server.url}/app.git`, ref: '--upload-pack=touch /tmp/x' })).json().error).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'ref' } });
      expect((await clone({ ref: 'main' })).json().error).toMatchObject({ code: 'INVALID_REQUEST', details: { parameter: 'git_url' } });
    } finally {
      await server.close();
    }
  });

  it('caches a result per workspace content, and the sweeper removes expired workspaces', async () => {
    const id = (await upload(await tarGz(PROJECT))).json().id;
    const first = await invoke('iac-scan', { workspace: id, path: 'app' });
    const second = await invoke('iac-scan', { workspace: id, path: 'app' });
    expect([first.json().cache.hit, second.json().cache.hit]).toEqual([false, true]);
    const changed = (await upload(await tarGz([{ name: 'app/Dockerfile', body: 'FROM scratch\n' }]))).json().id;
    expect((await invoke('iac-scan', { workspace: changed, path: 'app' })).json().cache.hit).toBe(false);

    const removed = await suite.t.app.get(WorkspacesService).sweep(new Date(Date.now() + 3601_000));
    expect(removed).toBeGreaterThanOrEqual(2);
    expect((await suite.t.request({ method: 'GET', url: `/v1/workspaces/${id}`, key: suite.acme.key })).statusCode).toBe(404);
  });
});

describeEachEngine('workspace quotas', (mode) => {
  const suite = useTestApp(mode, { env: { WORKSPACE_MAX_BYTES: String(4 * 1024 * 1024) } });

  const account = async (name: string, tier: Tier, numbers: { workspaces?: number; workspace_bytes?: number } = {}) => {
    const created = await suite.t.app.get(AccountsService).create({ name, tier, ...numbers });
    return suite.t.createKey(created.id, { name: 'k', type: 'service' });
  };
  const upload = (key: string, body: Buffer) => suite.t.request({ method: 'POST', url: '/v1/workspaces', key, headers: { 'content-type': 'application/gzip' }, payload: body });
  /** An archive of about `bytes` that does not compress. */
  const archiveOf = (bytes: number) => tarGz([{ name: 'app/Dockerfile', body: DOCKERFILE }, { name: 'blob', body: randomBytes(bytes) }]);

  it('refuses the upload past the count quota with 429 naming it, and the one past the bytes quota with 413; deleting frees room', async () => {
    const key = await account('two-workspaces', 'enterprise', { workspaces: 2, workspace_bytes: 20_000 });
    const small = await archiveOf(100);
    const first = (await upload(key, small)).json();
    expect((await upload(key, small)).statusCode).toBe(201);
    const full = await upload(key, small);
    expect(full.statusCode).toBe(429);
    expect(full.json().error).toMatchObject({ code: 'RATE_LIMITED', retryable: true, details: { quota: 'workspaces', limit: 2, used: 2 } });
    expect(full.json().error.message).toContain('2 of its 2 workspaces');
    expect(Number(full.headers['retry-after'])).toBeGreaterThan(3500); // when the oldest expires (WORKSPACE_TTL_SECONDS)
    expect((await suite.t.request({ method: 'DELETE', url: `/v1/workspaces/${first.id}`, key })).statusCode).toBe(204);
    expect((await upload(key, small)).statusCode).toBe(201);

    const bytesKey = await account('twenty-kb', 'enterprise', { workspace_bytes: 20_000 });
    const large = await archiveOf(8_000);
    expect((await upload(bytesKey, large)).statusCode).toBe(201);
    expect((await upload(bytesKey, large)).statusCode).toBe(201);
    const over = await upload(bytesKey, large);
    expect(over.statusCode).toBe(413);
    expect(over.json().error).toMatchObject({ code: 'INVALID_REQUEST', retryable: false, details: { quota: 'workspace_bytes', limit: 20_000, used: 2 * large.length, requested: large.length } });
    expect((await suite.t.request({ method: 'GET', url: '/v1/workspaces', key: bytesKey })).json().total).toBe(2); // the refused one left nothing
  });

  it("counts one account's concurrent uploads against each other: exactly its quota get in", async () => {
    const key = await account('three-at-once', 'enterprise', { workspaces: 3 });
    const body = await archiveOf(100);
    const statuses = (await Promise.all(Array.from({ length: 6 }, () => upload(key, body)))).map((res) => res.statusCode);
    expect(statuses.sort()).toEqual([201, 201, 201, 429, 429, 429]);
  });

  it('gives a free account 10 workspaces and 100 MiB, a pro account 100 and 2 GiB', async () => {
    expect(TIER_LIMITS.free).toMatchObject({ workspaces: 10, workspaceBytes: 100 * 1024 * 1024 });
    expect(TIER_LIMITS.pro).toMatchObject({ workspaces: 100, workspaceBytes: 2048 * 1024 * 1024 });
    const key = await account('free-ws', 'free');
    const body = await archiveOf(100);
    for (let i = 0; i < 10; i++) expect((await upload(key, body)).statusCode).toBe(201);
    expect((await upload(key, body)).json().error).toMatchObject({ code: 'RATE_LIMITED', details: { quota: 'workspaces', limit: 10, used: 10 } });
  });

  it('stores an archive in 1 MiB chunks (no one statement holds the database for all of it) and reads it back whole', async () => {
    const key = await account('chunked', 'enterprise');
    const body = await archiveOf(2_500_000);
    const created = await upload(key, body);
    expect(created.statusCode).toBe(201);
    const chunks: { n: number }[] = await suite.t.app.get(DataSource).query('SELECT length(data) AS n FROM workspace_chunks WHERE workspace_id = $1 ORDER BY seq', [created.json().id]);
    expect(chunks.map((c) => Number(c.n))).toEqual([1024 * 1024, 1024 * 1024, body.length - 2 * 1024 * 1024]);
    const iac = await suite.t.request({ method: 'POST', url: '/v1/tools/iac-scan/invoke', key, payload: { inputs: { workspace: created.json().id, path: 'app' } } });
    expect(iac.json().result.findings.map((finding: { rule: string }) => finding.rule)).toContain('dockerfile/curl-pipe-shell');
  });
});

describe('two services on different databases sharing one WORKSPACE_CACHE_DIR', () => {
  const cacheDir = mkdtempSync(path.join(tmpdir(), 'tos-shared-workspaces-'));
  const env = { ...LIMITS, WORKSPACE_CACHE_DIR: cacheDir };
  const reading = useTestApp(ENGINE_MODES[0], { env });
  const sweeping = useTestApp(ENGINE_MODES[0], { env });
  afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

  it("one's sweeper leaves the trees the other unpacked, which its own database does not name", async () => {
    const workspace = (await reading.t.request({ method: 'POST', url: '/v1/workspaces', key: reading.acme.key, headers: { 'content-type': 'application/gzip' }, payload: await tarGz(PROJECT) })).json();
    const scan = (folder: string) => reading.t.request({ method: 'POST', url: '/v1/tools/iac-scan/invoke', key: reading.acme.key, payload: { inputs: { workspace: workspace.id, path: folder } } });
    expect((await scan('app')).statusCode).toBe(200);
    const digest = workspace.digest.slice('sha256:'.length);
    const tree = path.join(cacheDir, readdirSync(cacheDir, { recursive: true, encoding: 'utf8' }).find((entry) => path.basename(entry) === digest)!);
    expect(existsSync(path.join(tree, 'app/Dockerfile'))).toBe(true);

    await sweeping.t.app.get(WorkspacesService).sweep();
    expect(existsSync(path.join(tree, 'app/Dockerfile'))).toBe(true);
    expect((await scan('app/src')).statusCode).toBe(200);
    await reading.t.app.get(WorkspacesService).sweep(new Date(Date.now() + 3601_000));
    expect(existsSync(tree)).toBe(false); // its own sweeper still removes it once the workspace expired
  });
});

describe('workspaces cloned from a git server (smart HTTP, egress allowed to loopback)', () => {
  const suite = useTestApp(ENGINE_MODES[0], { env: { ...LIMITS, EGRESS_ALLOW: '127.0.0.0/8' } });
  const root = mkdtempSync(path.join(tmpdir(), 'tos-git-server-'));
  let server: GitServer;
  beforeAll(async () => {
    const work = gitRepository();
    execFileSync('git', ['clone', '-q', '--bare', work, path.join(root, 'app.git')]);
    rmSync(work, { recursive: true, force: true });
    server = await startGitServer(root);
  });
  afterAll(async () => {
    await server?.close();
    rmSync(root, { recursive: true, force: true });
  });

  const clone = (payload: Record<string, unknown>) => suite.t.request({ method: 'POST', url: '/v1/workspaces', key: suite.acme.key, payload });
  const rules = async (id: string, ref?: string) =>
    (await suite.t.request({ method: 'POST', url: '/v1/tools/iac-scan/invoke', key: suite.acme.key, payload: { inputs: { workspace: id, path: 'app', ...(ref && { ref }) } } })).json().result.findings.map((finding: { rule: string }) => finding.rule);

  it('clones the default branch shallowly, or the branch or tag named; the clone keeps its .git for ref', async () => {
    const head = await clone({ git_url: `${server.url}/app.git` });
    expect(head.statusCode).toBe(201);
    expect(head.json()).toMatchObject({ id: expect.stringMatching(/^ws_/), format: 'tar.gz' });
    expect(await rules(head.json().id)).not.toContain('dockerfile/curl-pipe-shell');
    expect(await rules(head.json().id, 'HEAD')).not.toContain('dockerfile/curl-pipe-shell');
    const tagged = await clone({ git_url: `${server.url}/app.git`, ref: 'v1' });
    expect(await rules(tagged.json().id)).toContain('dockerfile/curl-pipe-shell');
    expect(server.requests.some((request) => request.endsWith('/git-upload-pack'))).toBe(true);
  });

  it('never lets git write the tree: a clone holding the link chain is refused by the archive checks', async () => {
    const file = canary();
    const work = chainRepository(file);
    execFileSync('git', ['clone', '-q', '--bare', work, path.join(root, 'chain.git')]);
    rmSync(work, { recursive: true, force: true });
    const res = await clone({ git_url: `${server.url}/chain.git` });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/through the link/), details: { parameter: 'git_url' } });
    expect(existsSync(path.dirname(file))).toBe(false);
  });

  it('tells a wrong branch or repository (400) from a server that fails (502, retryable)', async () => {
    expect((await clone({ git_url: `${server.url}/app.git`, ref: 'no-such-branch' })).json().error).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'ref' } });
    expect((await clone({ git_url: `${server.url}/missing.git` })).json().error).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'git_url' } });
    // A server that hangs up without a reply (a closed port could be taken by another test's server meanwhile).
    const broken = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve));
    try {
      const failed = await clone({ git_url: `http://127.0.0.1:${(broken.address() as AddressInfo).port}/app.git` });
      expect(failed.statusCode).toBe(502);
      expect(failed.json().error).toMatchObject({ code: 'TOOL_ERROR', retryable: true });
    } finally {
      await new Promise((resolve) => broken.close(resolve));
    }
  });
});

describe('workspaces read by a worker process [distributed]', () => {
  const mode = ENGINE_MODES.find((entry) => entry.name === 'distributed')!;
  const cacheDir = mkdtempSync(path.join(tmpdir(), 'tos-worker-workspaces-'));
  const suite = useTestApp(mode, { env: { ...LIMITS, ROLE: 'api' } });
  let worker: ServiceProcess | undefined;
  beforeAll(async () => {
    worker = await startServiceProcess('worker', { ...suite.env, WORKSPACE_CACHE_DIR: cacheDir, PORT: '0', WORKSPACE_ROOT: suite.t.workspaceRoot });
  }, 90_000);
  afterAll(async () => {
    await killProcess(worker);
    rmSync(cacheDir, { recursive: true, force: true });
  });

  it('runs an async scan of an uploaded workspace in the worker, which unpacks it from the database', async () => {
    const workspace = (await suite.t.request({ method: 'POST', url: '/v1/workspaces', key: suite.acme.key, headers: { 'content-type': 'application/gzip' }, payload: await tarGz(PROJECT) })).json();
    const accepted = await suite.t.request({ method: 'POST', url: '/v1/tools/iac-scan/invoke?async=true', key: suite.acme.key, payload: { inputs: { workspace: workspace.id, path: 'app' } } });
    expect(accepted.statusCode).toBe(202);
    const done = await until('the worker to finish', async () => {
      const execution = (await suite.t.request({ method: 'GET', url: `/v1/executions/${accepted.json().execution_id}`, key: suite.acme.key })).json();
      return ['success', 'error'].includes(execution.status) ? execution : undefined;
    }, 60_000, 200);
    expect(done).toMatchObject({ status: 'success', result: { files_scanned: 1 } });
    const [databaseFolder, ...others] = readdirSync(cacheDir); // one folder per database
    expect(others).toEqual([]);
    expect(readdirSync(path.join(cacheDir, databaseFolder))).toEqual([workspace.digest.slice('sha256:'.length)]);
    expect(existsSync(path.join(cacheDir, databaseFolder, workspace.digest.slice('sha256:'.length), 'app/Dockerfile'))).toBe(true);
  }, 90_000);
});
