/**
 * The example of issue 35 (README "Workflows, schedules and triggers"), end to end on both engines:
 * a signed GitHub `push` to a trigger starts a published workflow that runs secret-scan and
 * sast-scan in parallel on the pushed commit of the repository's workspace, then, only if either
 * found something, comments on the pull request (vcs-comment-pr, the loopback forge) and posts to
 * chat (chat-notify, the loopback chat service); a clean push comments nowhere; the same workflow
 * runs on a schedule. The forge token and the chat webhook are account secrets; every call goes
 * to 127.0.0.1 through the egress policy.
 */
import { execFileSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { DataSource } from 'typeorm';
import { OrchestrationLoop } from '../src/orchestration/orchestration-loop';
import { useTestApp, type TestAccount } from './support/app';
import { startChatFake, type ChatFake } from './support/chat/chat-fake';
import { describeEachEngine } from './support/engines';
import { EXAMPLE_TOKEN, startForge, stopForge, type StartedForge } from './support/forge';
import { until } from './support/poll';

/** The workflow of the example, read from README's `push-scan.yaml`, so the README shows what runs here. */
const PUSH_SCAN_YAML = /^cat > push-scan\.yaml <<'YAML'\n([\s\S]*?)^YAML$/m.exec(readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8'))![1];

const LEAKY_TOKEN = `ghp_${randomBytes(18).toString('hex')}`;

/** A repository with a clean commit, then one that leaks a token and evaluates a request parameter. */
function repository(): { archive: Buffer; clean: string; leaky: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'tos-push-scan-'));
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.test', '-c', 'init.defaultBranch=main', ...args], { cwd: dir, stdio: 'pipe' }).toString('utf8').trim();
  try {
    git('init', '-q');
    mkdirSync(path.join(dir, 'src'));
    writeFileSync(path.join(dir, 'src/index.js'), 'module.exports = (req) => Number(req.query.n) + 1;\n');
    git('add', '.');
    git('commit', '-qm', 'clean');
    const clean = git('rev-parse', 'HEAD');
    writeFileSync(path.join(dir, 'src/index.js'), `const token = '${LEAKY_TOKEN}';\nmodule.exports = (req) => eval(req.query.code);\n`);
    git('commit', '-qam', 'leaky');
    return { archive: execFileSync('tar', ['czf', '-', '-C', dir, '.']), clean, leaky: git('rev-parse', 'HEAD') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const pushOf = (after: string) => ({ ref: 'refs/heads/retry-webhooks', after, repository: { name: 'widgets', full_name: 'acme/widgets', owner: { login: 'acme' } }, head_commit: { id: after } });
const signed = (secret: string, body: string, delivery: string) => ({
  'content-type': 'application/json',
  'x-github-event': 'push',
  'x-github-delivery': delivery,
  'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
});

describeEachEngine('push-scan example', (mode) => {
  const env: Record<string, string> = { SECRETS_KEY: randomBytes(32).toString('base64'), EGRESS_ALLOW: '127.0.0.1', ORCHESTRATION_POLL_MS: '0' };
  let forge: StartedForge;
  let chat: ChatFake;
  // Registered before the app's own beforeAll: the app reads FORGE_API_URL from `env` as it starts.
  beforeAll(async () => {
    forge = await startForge();
    chat = await startChatFake();
    env.FORGE_API_URL = forge.config.FORGE_API_URL;
  });
  afterAll(async () => {
    await chat?.close();
    await stopForge(forge);
  });
  const suite = useTestApp(mode, { env });

  let owner: TestAccount;
  let workspace: string;
  let commits: { clean: string; leaky: string };
  let workflowId: string;
  beforeAll(async () => {
    owner = await suite.t.createAccount('push-scan');
    for (const [name, value] of [['FORGE_TOKEN', EXAMPLE_TOKEN], ['SECURITY_CHAT_WEBHOOK', `${chat.url}/services/T000/B000/push-scan`]]) {
      expect((await suite.t.request({ method: 'PUT', url: `/v1/secrets/${name}`, key: owner.key, payload: { value } })).statusCode).toBe(201);
    }
    const repo = repository();
    commits = repo;
    const uploaded = await suite.t.request({ method: 'POST', url: '/v1/workspaces', key: owner.key, headers: { 'content-type': 'application/gzip' }, payload: repo.archive });
    expect(uploaded.statusCode).toBe(201);
    workspace = uploaded.json().id;
    const saved = await suite.t.request({ method: 'POST', url: '/v1/workflows', key: owner.key, headers: { 'content-type': 'application/yaml' }, payload: PUSH_SCAN_YAML });
    expect(saved.statusCode).toBe(201);
    workflowId = saved.json().id;
  });

  const get = async (url: string) => {
    const res = await suite.t.request({ method: 'GET', url, key: owner.key });
    expect(res.statusCode).toBe(200);
    return res.json();
  };
  const ended = (id: string) =>
    until(`run ${id} ended`, async () => {
      const run = await get(`/v1/executions/${id}`);
      return ['success', 'error', 'cancelled'].includes(run.status) ? run : undefined;
    }, 60_000, 100);
  const stepsOf = async (runId: string) =>
    Object.fromEntries(
      ((await suite.t.app.get(DataSource).query(`SELECT step_key, status, created_at, completed_at FROM executions WHERE parent_execution_id = $1`, [runId])) as Array<{ step_key: string; status: string; created_at: Date; completed_at: Date }>).map((s) => [s.step_key, s]),
    );
  const comments = () => forge.forge.model.comments.filter((comment) => comment.body.includes('Scan of '));
  const chatPosts = () => chat.requests.filter((request) => request.path === '/services/T000/B000/push-scan');

  it('is published as the tool workflow.push-scan', async () => {
    const tool = await get('/v1/tools/workflow.push-scan');
    expect(tool).toMatchObject({ id: 'workflow.push-scan' });
  });

  it('a signed push of a leaky commit runs both scans in parallel, then comments on the pull request and posts to chat; a clean push reports nowhere', async () => {
    const trigger = (
      await suite.t.request({
        method: 'POST',
        url: '/v1/triggers',
        key: owner.key,
        payload: {
          target: { workflow: 'push-scan', inputs: { workspace, pull_number: 1 } },
          verification: { type: 'github' },
          filter: "headers.`x-github-event` = 'push'",
          inputs: { commit: 'payload.after', owner: 'payload.repository.owner.login', repo: 'payload.repository.name' },
        },
      })
    ).json();
    expect(trigger).toMatchObject({ id: expect.stringMatching(/^trg_/), target: { workflow: workflowId }, secret: expect.any(String) });
    const deliver = (after: string, delivery: string, secret = trigger.secret) => {
      const body = JSON.stringify(pushOf(after));
      return suite.t.request({ method: 'POST', url: `/v1/triggers/${trigger.id}/events`, payload: body, headers: signed(secret, body, delivery) });
    };

    expect((await deliver(commits.leaky, 'forged', 'not-the-trigger-secret')).statusCode).toBe(401);

    const leaky = await deliver(commits.leaky, 'delivery-leaky');
    expect([leaky.statusCode, leaky.json().accepted]).toEqual([202, true]);
    const run = await ended(leaky.json().execution_id);
    expect(run).toMatchObject({ status: 'success', kind: 'workflow', tool_id: 'workflow.push-scan', trigger_id: trigger.id, result: { secrets: 1 } });
    expect(run.result.sast).toBeGreaterThan(0);
    const steps = await stepsOf(run.id);
    expect(Object.fromEntries(Object.entries(steps).map(([key, step]) => [key, step.status]))).toEqual({ secrets: 'success', sast: 'success', comment: 'success', notify: 'success' });
    // In parallel: each scan was queued before the other ended (neither waited for the other); the reports after both.
    expect(steps.secrets.created_at < steps.sast.completed_at && steps.sast.created_at < steps.secrets.completed_at).toBe(true);
    expect(steps.comment.created_at >= steps.sast.completed_at && steps.comment.created_at >= steps.secrets.completed_at).toBe(true);

    expect(comments()).toEqual([expect.objectContaining({ body: expect.stringContaining(`Scan of ${commits.leaky}: 1 leaked secret(s), ${run.result.sast} SAST finding(s)`) })]);
    expect(chatPosts()).toEqual([expect.objectContaining({ body: expect.objectContaining({ text: `acme/widgets ${commits.leaky}: findings, see pull request #1` }) })]);
    // The token found is not in what the run stored or posted.
    expect(JSON.stringify(await get(`/v1/executions/${run.id}`))).not.toContain(LEAKY_TOKEN);
    expect(JSON.stringify(comments()) + JSON.stringify(chatPosts())).not.toContain(LEAKY_TOKEN);

    expect((await deliver(commits.leaky, 'delivery-leaky')).json()).toMatchObject({ duplicate: true, execution_id: run.id });

    const clean = await deliver(commits.clean, 'delivery-clean');
    const quiet = await ended(clean.json().execution_id);
    expect(quiet).toMatchObject({ status: 'success', trigger_id: trigger.id, result: { secrets: 0, sast: 0 } });
    const quietSteps = await stepsOf(quiet.id);
    expect([quietSteps.secrets.status, quietSteps.sast.status]).toEqual(['success', 'success']);
    expect([quietSteps.comment, quietSteps.notify]).toEqual([undefined, undefined]);
    expect(comments()).toHaveLength(1);
    expect(chatPosts()).toHaveLength(1);
  });

  it('runs the same workflow on a schedule, each tick a run with schedule_id', async () => {
    const created = await suite.t.request({
      method: 'POST',
      url: '/v1/schedules',
      key: owner.key,
      payload: { target: { workflow: workflowId, inputs: { workspace, commit: commits.leaky, owner: 'acme', repo: 'widgets', pull_number: 1 } }, cron: '*/10 * * * * *' },
    });
    expect(created.statusCode).toBe(201);
    const schedule = created.json();
    const loop = suite.t.app.get(OrchestrationLoop);
    const due = new Date(schedule.next_run_at);
    await loop.pass(new Date(due.getTime() + 100));
    const [tick] = (await get(`/v1/schedules/${schedule.id}/runs`)).runs;
    expect(tick).toMatchObject({ status: 'started', execution_id: expect.stringMatching(/^exec_/) });
    const run = await ended(tick.execution_id);
    expect(run).toMatchObject({ status: 'success', kind: 'workflow', schedule_id: schedule.id, result: { secrets: 1 } });
    // The marker keeps one living comment on the pull request: the scheduled run updated it.
    expect(comments()).toHaveLength(1);
    expect(forge.forge.calls('issues/update-comment')).toHaveLength(1);
    expect(chatPosts()).toHaveLength(2);
  });
});
