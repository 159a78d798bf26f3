/**
 * MCP 2026-07-28 `subscriptions/listen`: a stream that opts in to `toolsListChanged` hears
 * `notifications/tools/list_changed` when its account's catalogue changes (a published workflow
 * comes, goes or is renamed), from whichever API process made the change, and nothing of other
 * accounts or of tools its key may not use. The SDK v2 client has no listen API: a raw client
 * speaks the documented messages. A stream may also follow executions (`resourceSubscriptions` of
 * `tos://executions/{id}`): `notifications/resources/updated` as each it may see changes.
 */
import { startTestApp, useTestApp, type TestAccount, type TestApp } from './support/app';
import { describeEachEngine } from './support/engines';
import { listChanges, listen as openStream, type Listening } from './support/mcp-listen';
import { until } from './support/poll';
import { TestToolsModule } from './support/test-tools.module';

const WORKFLOW = {
  description: 'Echoes its input',
  inputs: { a: { type: 'integer', required: true } },
  steps: [{ id: 'sum', tool: 'json-transform', inputs: { expression: 'a', data: { a: '${{ inputs.a }}' } } }],
  outputs: { total: '${{ steps.sum.result.result }}' },
};

describeEachEngine('MCP subscriptions/listen', (mode) => {
  const suite = useTestApp(mode, { extensions: [TestToolsModule] });
  let url: string;
  /** The process that changes the catalogue: another API process on the same database and Redis when distributed, else the same one. */
  let other: TestApp;
  const open: Listening[] = [];

  beforeAll(async () => {
    await suite.t.app.listen({ port: 0, host: '127.0.0.1' });
    url = `${(await suite.t.app.getUrl()).replace('[::1]', '127.0.0.1')}/v1/mcp`;
    other = mode.name === 'distributed' ? await startTestApp({ extensions: [TestToolsModule], env: suite.env }) : suite.t;
  });
  afterEach(() => {
    for (const stream of open.splice(0)) stream.close();
  });
  afterAll(async () => {
    if (other !== suite.t) await other.close();
  });

  const listen = (key: string, notifications: Record<string, unknown>, id: unknown = 1) => openStream(url, key, notifications, open, id);
  const changes = listChanges;
  const save = async (owner: TestAccount, document: object): Promise<string> => {
    const res = await other.request({ method: 'POST', url: '/v1/workflows', key: owner.key, payload: document });
    expect(res.statusCode).toBe(201);
    return res.json().id as string;
  };

  it('acknowledges what it honours, then tells the account of its published workflows coming, changing and going', async () => {
    const acme = await suite.t.createAccount('listen-acme');
    const stream = await listen(acme.key, { toolsListChanged: true, promptsListChanged: true });
    expect(stream.status).toBe(200);
    const [ack] = stream.messages;
    expect(ack.method).toBe('notifications/subscriptions/acknowledged');
    // Only what the server can deliver: the tool list changes; prompts never do.
    expect(ack.params?.notifications).toEqual({ toolsListChanged: true });
    const subscriptionId = ack.params?._meta?.['io.modelcontextprotocol/subscriptionId'];
    expect(subscriptionId).toBeDefined();

    // A draft (not published) is not in the catalogue: no change.
    const draft = await save(acme, { ...WORKFLOW, name: 'draft' });
    const published = await save(acme, { ...WORKFLOW, name: 'shown', publish: true });
    await until('the change heard', async () => changes(stream).length === 1 || undefined, 10_000, 20);
    expect(changes(stream)[0].params?._meta?.['io.modelcontextprotocol/subscriptionId']).toBe(subscriptionId);

    const renamed = await other.request({ method: 'PUT', url: `/v1/workflows/${published}`, key: acme.key, payload: { ...WORKFLOW, name: 'renamed', publish: true } });
    expect(renamed.statusCode).toBe(200);
    await until('the rename heard', async () => changes(stream).length === 2 || undefined, 10_000, 20);
    expect((await other.request({ method: 'DELETE', url: `/v1/workflows/${published}`, key: acme.key })).statusCode).toBe(200);
    await until('the removal heard', async () => changes(stream).length === 3 || undefined, 10_000, 20);
    // A draft's removal is no change either: the next published one is the only change heard after it
    // (changes arrive in the order they were made).
    expect((await other.request({ method: 'DELETE', url: `/v1/workflows/${draft}`, key: acme.key })).statusCode).toBe(200);
    await save(acme, { ...WORKFLOW, name: 'last', publish: true });
    await until('the last change heard', async () => changes(stream).length >= 4 || undefined, 10_000, 20);
    // A change made by the process holding the stream is told once, though that process hears it back from Redis.
    await suite.t.request({ method: 'POST', url: '/v1/workflows', key: acme.key, payload: { ...WORKFLOW, name: 'local', publish: true } });
    await until('the local change heard', async () => changes(stream).length >= 5 || undefined, 10_000, 20);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(changes(stream)).toHaveLength(5);
  });

  it("hears nothing of another account's catalogue, nor of tools its key may not use", async () => {
    const acme = await suite.t.createAccount('listen-own');
    const rival = await suite.t.createAccount('listen-rival');
    // Keys name registry tools only (docs/workflows.md#publishing): a narrowed key never lists a workflow.
    const narrow = await suite.t.createKey(acme.id, { name: 'narrow', type: 'service', tool_ids: ['json-transform'] });
    const mine = await listen(acme.key, { toolsListChanged: true });
    const narrowed = await listen(narrow, { toolsListChanged: true });
    const theirs = await listen(rival.key, { toolsListChanged: true });

    await save(rival, { ...WORKFLOW, name: 'rivals', publish: true });
    await until("the rival's own stream hears it", async () => changes(theirs).length === 1 || undefined, 10_000, 20);
    await save(acme, { ...WORKFLOW, name: 'hidden', publish: true });
    await save(acme, { ...WORKFLOW, name: 'hidden-too', publish: true });
    await until('the account-wide stream hears both', async () => changes(mine).length === 2 || undefined, 10_000, 20);
    // One process's streams hear a change together (the same delivery): what is missing was never sent.
    expect(changes(theirs)).toHaveLength(1);
    expect(changes(narrowed)).toHaveLength(0);
    expect(narrowed.messages).toHaveLength(1); // its acknowledgement
  });

  it('follows the executions it names: their updates as they run and end, none of an execution its key may not see', async () => {
    const acme = await suite.t.createAccount('listen-follow');
    const rival = await suite.t.createAccount('listen-follow-rival');
    const started = await other.request({ method: 'POST', url: '/v1/tools/test-sleep/invoke', key: acme.key, payload: { inputs: { ms: 600 }, options: { async: true } } });
    expect(started.statusCode).toBe(202);
    const id = started.json().execution_id as string;
    const uri = `tos://executions/${id}`;
    const mine = await listen(acme.key, { resourceSubscriptions: [uri, 'tos://executions/exe_someone_else'] });
    const theirs = await listen(rival.key, { resourceSubscriptions: [uri] });
    expect(mine.messages[0]).toMatchObject({ method: 'notifications/subscriptions/acknowledged', params: { notifications: { resourceSubscriptions: [uri, 'tos://executions/exe_someone_else'] } } });

    const updates = (stream: Listening) => stream.messages.filter((message) => message.method === 'notifications/resources/updated');
    await until('the execution ended', async () => {
      const res = await suite.t.request({ method: 'GET', url: `/v1/executions/${id}`, key: acme.key });
      return res.json().status === 'success' || undefined;
    }, 15_000, 50);
    // The end is told: progress and status updates came, each naming the URI; the client reads it after.
    await until('the end heard', async () => updates(mine).length >= 2 || undefined, 10_000, 20);
    for (const update of updates(mine)) expect(update.params).toMatchObject({ uri, _meta: { 'io.modelcontextprotocol/subscriptionId': expect.anything() } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(updates(theirs)).toHaveLength(0);
  });

  it('following executions needs executions:read, and a key holds a bounded number of live connections', async () => {
    const acme = await suite.t.createAccount('listen-follow-scopes');
    const lister = await suite.t.createKey(acme.id, { name: 'list-only', type: 'service', scopes: ['tools:read'] });
    const refused = await listen(lister, { resourceSubscriptions: ['tos://executions/exe_1'] });
    expect(refused.messages[0].error?.message).toMatch(/executions:read/);
    const tooMany = await listen(acme.key, { resourceSubscriptions: Array.from({ length: 101 }, (_, i) => `tos://executions/exe_${i}`) });
    expect(tooMany.messages[0].error?.message).toBe('A stream follows at most 100 resources; got 101');
    // Twenty followers take the key's share of this process's live connections; the next is refused.
    const held = await Promise.all(Array.from({ length: 20 }, (_, i) => listen(acme.key, { resourceSubscriptions: [`tos://executions/exe_${i}`] }, i + 10)));
    for (const stream of held) expect(stream.messages[0].method).toBe('notifications/subscriptions/acknowledged');
    const over = await listen(acme.key, { resourceSubscriptions: ['tos://executions/exe_x'] });
    expect(over.messages[0].error?.message).toMatch(/already holds 20 live connections/);
    // Closing one gives its place back.
    held[0].close();
    await until('a place freed', async () => {
      const again = await listen(acme.key, { resourceSubscriptions: ['tos://executions/exe_y'] });
      return again.messages[0].method === 'notifications/subscriptions/acknowledged' || (again.close(), undefined);
    }, 5_000, 50);
  });

  it('needs tools:read, and an empty filter ends the stream at once', async () => {
    const acme = await suite.t.createAccount('listen-scopes');
    const invoker = await suite.t.createKey(acme.id, { name: 'invoke-only', type: 'service', scopes: ['tools:invoke'] });
    const refused = await listen(invoker, { toolsListChanged: true });
    expect(refused.messages[0].error?.message).toMatch(/tools:read/);

    const empty = await listen(acme.key, {}, 7);
    await until('the stream ended', async () => empty.messages.length === 2 || undefined, 5_000, 20);
    expect(empty.messages[0]).toMatchObject({ method: 'notifications/subscriptions/acknowledged', params: { notifications: {} } });
    expect(empty.messages[1]).toMatchObject({ id: 7, result: { resultType: 'complete' } });
  });
});
