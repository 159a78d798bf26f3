import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runTool, toolFailure } from '@tos/sdk/testing';
import { startKubeApiServer, type KubeApiServer } from '../../../test/support/kube/kube-api-server';
import { ClusterApplyTool } from './cluster-apply.tool';

interface Applied {
  kind: string;
  api_version: string;
  name: string;
  namespace: string | null;
  result: string;
  resource_version: string;
}
interface Output {
  dry_run: boolean;
  field_manager: string;
  objects: Applied[];
  counts: { created: number; configured: number; unchanged: number };
}

const configMap = (name: string, data: Record<string, string>, extra = '') =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${extra}data:\n${Object.entries(data).map(([k, v]) => `  ${k}: "${v}"`).join('\n')}\n`;

describe('cluster-apply', () => {
  let kube: KubeApiServer;
  let dir: string;
  let kubeconfig: string;
  const apply = (input: Record<string, unknown>, file = kubeconfig) => runTool<Output>(ClusterApplyTool, input, { config: { KUBECONFIG: file } });

  beforeAll(async () => {
    kube = await startKubeApiServer();
    dir = mkdtempSync(path.join(tmpdir(), 'tos-kube-'));
    kubeconfig = path.join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, kube.kubeconfig());
  });
  afterAll(async () => {
    await kube?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  afterEach(() => {
    kube.failWith(null);
    kube.applyDelayMs = 0;
  });

  it('creates, then reports unchanged, then configured, with the resource versions the apiserver gave', async () => {
    const first = await apply({ manifest: configMap('app', { mode: 'fast' }) });
    expect(first).toMatchObject({ dry_run: false, field_manager: 'tool-orchestration-service', counts: { created: 1, configured: 0, unchanged: 0 } });
    expect(first.objects).toEqual([{ kind: 'ConfigMap', api_version: 'v1', name: 'app', namespace: 'default', result: 'created', resource_version: expect.any(String) }]);
    expect(kube.get('ConfigMap', 'app')).toMatchObject({ data: { mode: 'fast' }, metadata: { managedFields: [{ manager: 'tool-orchestration-service', operation: 'Apply', fieldsV1: { 'f:data': { 'f:mode': {} } } }] } });

    const again = await apply({ manifest: configMap('app', { mode: 'fast' }) });
    expect(again.objects[0]).toMatchObject({ result: 'unchanged', resource_version: first.objects[0].resource_version });

    const changed = await apply({ manifest: configMap('app', { mode: 'slow' }) });
    expect(changed.objects[0].result).toBe('configured');
    expect(Number(changed.objects[0].resource_version)).toBeGreaterThan(Number(first.objects[0].resource_version));
    expect(kube.get('ConfigMap', 'app')?.data).toEqual({ mode: 'slow' });
  });

  it('removes a field the manager no longer applies, and keeps one another manager still owns', async () => {
    await apply({ manifest: configMap('trimmed', { keep: '1', drop: '2' }) });
    await apply({ manifest: configMap('trimmed', { shared: 'x' }), field_manager: 'other-team' });
    const out = await apply({ manifest: configMap('trimmed', { keep: '1', shared: 'x' }) });
    expect(out.objects[0].result).toBe('configured');
    expect(kube.get('ConfigMap', 'trimmed')?.data).toEqual({ keep: '1', shared: 'x' });
    // Dropping `shared` again leaves it: other-team still owns it.
    await apply({ manifest: configMap('trimmed', { keep: '1' }) });
    expect(kube.get('ConfigMap', 'trimmed')?.data).toEqual({ keep: '1', shared: 'x' });
  });

  it('applies several documents of several kinds, a custom kind found through discovery and a List, in order', async () => {
    const manifest = [
      'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n',
      configMap('shop-settings', { currency: 'EUR' }, '  namespace: shop\n'),
      'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  size: 3\n',
      'apiVersion: v1\nkind: List\nitems:\n  - apiVersion: apps/v1\n    kind: Deployment\n    metadata:\n      name: web\n    spec:\n      replicas: 2\n',
      '',
    ].join('---\n');
    const out = await apply({ manifest, field_manager: 'ci-pipeline' });
    expect(out.objects.map(({ kind, name, namespace, result }) => [kind, name, namespace, result])).toEqual([
      ['Namespace', 'shop', null, 'created'],
      ['ConfigMap', 'shop-settings', 'shop', 'created'],
      ['Widget', 'w1', 'default', 'created'],
      ['Deployment', 'web', 'default', 'created'],
    ]);
    expect(kube.get('Widget', 'w1')?.metadata.managedFields[0].manager).toBe('ci-pipeline');
  });

  it('puts namespaced objects without one in the given namespace and refuses an object naming another', async () => {
    await apply({ manifest: 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n' });
    const out = await apply({ manifest: configMap('in-a', { x: '1' }), namespace: 'team-a' });
    expect(out.objects[0].namespace).toBe('team-a');
    expect(kube.get('ConfigMap', 'in-a', 'team-a')).toBeDefined();
    const err = await toolFailure(apply({ manifest: configMap('elsewhere', { x: '1' }, '  namespace: default\n'), namespace: 'team-a' }));
    expect(err).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'namespace', document: 1 } });
  });

  it('dry run persists nothing and says what would happen', async () => {
    const before = kube.applies;
    const out = await apply({ manifest: configMap('dry', { a: '1' }), dry_run: true });
    expect(out).toMatchObject({ dry_run: true, objects: [{ name: 'dry', result: 'created' }] });
    expect(kube.applies).toBe(before + 1);
    expect(kube.get('ConfigMap', 'dry')).toBeUndefined();
  });

  it('with confirm, asks before changing anything (naming the changes the dry run found) and applies only on an accepted answer', async () => {
    const manifest = configMap('confirmed', { tier: 'gold' });
    const asking = (answers: Record<string, Record<string, unknown>>) => runTool<Output>(ClusterApplyTool, { manifest, confirm: true }, { config: { KUBECONFIG: kubeconfig }, answers });
    // No answer yet: the question names the plan and nothing is applied.
    const unanswered = await asking({}).catch((err: Error) => err.message);
    expect(unanswered).toMatch(/asked 'confirm_apply_[0-9a-f]{16}' \(elicitation\/create: Apply to the cluster\? ConfigMap default\/confirmed created\.\)/);
    expect(kube.get('ConfigMap', 'confirmed')).toBeUndefined();
    const key = /'(confirm_apply_[0-9a-f]+)'/.exec(unanswered as string)![1];

    const declined = await toolFailure(asking({ [key]: { action: 'decline' } }));
    expect(declined).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'confirm', action: 'decline' } });
    expect(declined.message).toMatch(/nothing was changed/);
    expect(kube.get('ConfigMap', 'confirmed')).toBeUndefined();

    const accepted = await asking({ [key]: { action: 'accept', content: { apply: true } } });
    expect(accepted.counts).toEqual({ created: 1, configured: 0, unchanged: 0 });
    expect(kube.get('ConfigMap', 'confirmed')?.data).toEqual({ tier: 'gold' });

    // Nothing left to change: nothing to confirm.
    expect((await asking({})).counts).toEqual({ created: 0, configured: 0, unchanged: 1 });
    // The plan changed since the answer was given (another value): the old answer does not fit, the caller is asked again.
    const changed = await runTool<Output>(ClusterApplyTool, { manifest: configMap('confirmed', { tier: 'silver' }), confirm: true }, { config: { KUBECONFIG: kubeconfig }, answers: { [key]: { action: 'accept', content: { apply: true } } } }).catch((err: Error) => err.message);
    expect(changed).toMatch(/asked 'confirm_apply_/);
    expect(changed).not.toContain(key);
    expect(kube.get('ConfigMap', 'confirmed')?.data).toEqual({ tier: 'gold' });
  });

  it('fails on a field another manager owns, naming the fields and managers, and takes it over with force_conflicts', async () => {
    await apply({ manifest: configMap('shared', { owner: 'platform', color: 'blue' }), field_manager: 'platform-team' });
    const err = await toolFailure(apply({ manifest: configMap('shared', { owner: 'app', color: 'blue' }) }));
    expect(err).toMatchObject({
      code: 'INVALID_INPUT',
      retryable: false,
      details: { parameter: 'manifest', conflicts: [{ object: 'ConfigMap default/shared', field: '.data.owner', manager: 'platform-team' }] },
    });
    expect(err.message).toContain('.data.owner (owned by platform-team)');
    expect(kube.get('ConfigMap', 'shared')?.data.owner).toBe('platform');

    const forced = await apply({ manifest: configMap('shared', { owner: 'app', color: 'blue' }), force_conflicts: true });
    expect(forced.objects[0].result).toBe('configured');

    // A conflict after other objects went through says which were applied.
    const partial = await toolFailure(apply({ manifest: [configMap('before-conflict', { a: '1' }), configMap('shared', { owner: 'platform' })].join('---\n'), field_manager: 'platform-team' }));
    expect(partial.details).toMatchObject({ conflicts: [{ field: '.data.owner', manager: 'tool-orchestration-service' }], applied: [{ name: 'before-conflict', result: 'created' }] });
    expect(partial.message).toContain('Applied before the failure: ConfigMap default/before-conflict (created)');
    const managers = kube.get('ConfigMap', 'shared')?.metadata.managedFields.map(({ manager, fieldsV1 }: { manager: string; fieldsV1: { 'f:data': object } }) => [manager, Object.keys(fieldsV1['f:data']).sort()]);
    // color had the same value for both, so both still own it; owner moved to us.
    expect(managers).toEqual(
      expect.arrayContaining([
        ['platform-team', ['f:color']],
        ['tool-orchestration-service', ['f:color', 'f:owner']],
      ]),
    );
  });

  it.each([
    ['invalid YAML', 'apiVersion: v1\nkind: ConfigMap\nmetadata: [oops\n', /document 1 is not valid YAML \(line \d+\)/],
    ['a document without a name', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n', /document 1 \(ConfigMap\) needs metadata.name/],
    ['a document without a kind', 'apiVersion: v1\nmetadata:\n  name: x\n', /document 1 needs apiVersion and kind/],
    ['an empty manifest', '---\n', /holds no object/],
  ])('refuses %s as INVALID_INPUT before calling the cluster', async (_, manifest, message) => {
    const before = kube.applies;
    const err = await toolFailure(apply({ manifest }));
    expect(err).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'manifest' } });
    expect(err.message).toMatch(message);
    expect(kube.applies).toBe(before);
  });

  it('refuses a kind the cluster does not serve, found out through discovery', async () => {
    const err = await toolFailure(apply({ manifest: 'apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: g\n' }));
    expect(err).toMatchObject({ code: 'INVALID_INPUT', details: { kind: 'Gadget', api_version: 'example.com/v1' } });
    expect(err.message).toMatch(/serves no Gadget in example\.com\/v1/);
  });

  it('refuses an object in a namespace that does not exist, with the apiserver message', async () => {
    const err = await toolFailure(apply({ manifest: configMap('lost', { a: '1' }, '  namespace: nowhere\n') }));
    expect(err).toMatchObject({ code: 'INVALID_INPUT', details: { upstream: { service: 'kubernetes', status: 404 } } });
    expect(err.message).toContain('namespaces "nowhere" not found');
  });

  it('treats apiserver 5xx as retryable', async () => {
    kube.failWith(503);
    const err = await toolFailure(apply({ manifest: configMap('later', { a: '1' }) }));
    expect(err).toMatchObject({ code: 'TOOL_ERROR', retryable: true, details: { upstream: { service: 'kubernetes', status: 503 } } });
  });

  it('fails clearly on credentials the cluster refuses, an unreachable apiserver, and no kubeconfig', async () => {
    const badToken = path.join(dir, 'bad-token');
    writeFileSync(badToken, kube.kubeconfig('wrong-token'));
    const refused = await toolFailure(apply({ manifest: configMap('x', { a: '1' }) }, badToken));
    expect(refused).toMatchObject({ code: 'TOOL_ERROR', retryable: false, details: { upstream: { status: 401 } } });
    expect(refused.message).not.toContain('wrong-token');

    const gone = await startKubeApiServer();
    const goneConfig = path.join(dir, 'gone');
    writeFileSync(goneConfig, gone.kubeconfig());
    await gone.close();
    expect(await toolFailure(apply({ manifest: configMap('x', { a: '1' }) }, goneConfig))).toMatchObject({ code: 'TOOL_ERROR', retryable: true });

    const missing = await toolFailure(apply({ manifest: configMap('x', { a: '1' }) }, path.join(dir, 'no-such-file')));
    expect(missing.message).toMatch(/kubeconfig in KUBECONFIG cannot be read/);
  });

  it('refuses an apiserver address outside the egress policy at the address check', async () => {
    const err = await toolFailure(runTool(ClusterApplyTool, { manifest: configMap('x', { a: '1' }) }, { config: { KUBECONFIG: kubeconfig }, egressAllow: '' }));
    expect(err).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'KUBECONFIG' } });
    expect(kube.get('ConfigMap', 'x')).toBeUndefined();
  });

  it('stops mid-apply when cancelled: objects after the cancel are never sent', async () => {
    kube.applyDelayMs = 300;
    const abort = new AbortController();
    const manifest = ['a', 'b', 'c'].map((name) => configMap(`cancel-${name}`, { n: name })).join('---\n');
    const run = runTool(ClusterApplyTool, { manifest }, { config: { KUBECONFIG: kubeconfig }, signal: abort.signal });
    const started = kube.applies;
    for (let i = 0; i < 50 && kube.applies === started; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    abort.abort();
    await expect(run).rejects.toBeDefined();
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(kube.applies).toBe(started + 1);
    expect(kube.get('ConfigMap', 'cancel-b')).toBeUndefined();
    expect(kube.get('ConfigMap', 'cancel-c')).toBeUndefined();
  });
});
