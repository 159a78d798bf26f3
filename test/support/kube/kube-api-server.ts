/**
 * A loopback Kubernetes API server of our own, for cluster-apply's tests (no apiserver is packaged
 * for Debian 12). It follows the Kubernetes documentation for what it covers:
 *
 * - API discovery: `/api` (APIVersions), `/api/v1`, `/apis` (APIGroupList) and `/apis/{group}/{version}`
 *   (APIResourceList with kind, name, namespaced, verbs), for core/v1, apps/v1, batch/v1,
 *   networking.k8s.io/v1, rbac.authorization.k8s.io/v1 and a custom group `example.com/v1` (Widget),
 *   so kinds are found by discovery, not by a table in the client.
 * - Server-side apply: `PATCH` with `Content-Type: application/apply-patch+yaml` (YAML or JSON),
 *   `fieldManager` required, `force`, `dryRun=All` (nothing stored). Each manager owns the leaf
 *   fields it applied (`metadata.managedFields`, operation Apply, FieldsV1); a field it no longer
 *   applies and no one else owns is removed; a field another manager owns with a different value is a
 *   409 Conflict with a `Status` body whose causes are `FieldManagerConflict`s naming manager and
 *   field, unless `force=true` moves the ownership. A new object answers 201, a changed one 200 with
 *   a new `resourceVersion`, an unchanged one 200 with the same. Lists are atomic (no merge by key),
 *   as for lists without `x-kubernetes-list-type: map`.
 * - Errors as `Status` bodies: 401 without the bearer token, 404 for an unknown resource or a missing
 *   namespace, 400 for a body that is not an object of the URL's kind, 415 for another patch type,
 *   422 for an object without `metadata.name`.
 * - HTTPS with a CA of its own (in the kubeconfig it writes), as the client requires.
 * - GET of one object. Test switches: answer every request with a status (`failWith`), or hold
 *   applies for a while (`applyDelayMs`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { certificateAuthority } from '../test-ca';

interface ResourceType {
  group: string;
  version: string;
  kind: string;
  name: string;
  namespaced: boolean;
}

const RESOURCE_TYPES: ResourceType[] = [
  { group: '', version: 'v1', kind: 'Namespace', name: 'namespaces', namespaced: false },
  { group: '', version: 'v1', kind: 'ConfigMap', name: 'configmaps', namespaced: true },
  { group: '', version: 'v1', kind: 'Secret', name: 'secrets', namespaced: true },
  { group: '', version: 'v1', kind: 'Service', name: 'services', namespaced: true },
  { group: '', version: 'v1', kind: 'ServiceAccount', name: 'serviceaccounts', namespaced: true },
  { group: 'apps', version: 'v1', kind: 'Deployment', name: 'deployments', namespaced: true },
  { group: 'batch', version: 'v1', kind: 'Job', name: 'jobs', namespaced: true },
  { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress', name: 'ingresses', namespaced: true },
  { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRole', name: 'clusterroles', namespaced: false },
  { group: 'example.com', version: 'v1', kind: 'Widget', name: 'widgets', namespaced: true },
];
const VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
const APPLY_PATCH = 'application/apply-patch+yaml';

type Json = Record<string, any>;

interface Stored {
  object: Json;
  /** Per manager, the leaf paths it owns (JSON-encoded path arrays). */
  owners: Map<string, Set<string>>;
  times: Map<string, string>;
}

export interface KubeApiServer {
  url: string;
  token: string;
  /** The stored object, or undefined. */
  get(kind: string, name: string, namespace?: string): Json | undefined;
  /** Answer every request with this status (a Status body) until set to null. */
  failWith(status: number | null): void;
  /** Hold each apply this long before answering. */
  applyDelayMs: number;
  /** Applies answered so far (dry runs included). */
  readonly applies: number;
  /** A kubeconfig for this server (token auth, its CA, on loopback). */
  kubeconfig(token?: string): string;
  close(): Promise<void>;
}

export async function startKubeApiServer(options: { host?: string } = {}): Promise<KubeApiServer> {
  const token = `test-token-${Math.random().toString(36).slice(2)}`;
  const store = new Map<string, Stored>();
  let revision = 100;
  let failing: number | null = null;
  let applies = 0;
  const state = { applyDelayMs: 0 };
  for (const name of ['default', 'kube-system']) {
    store.set(key(RESOURCE_TYPES[0], name), { object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, uid: `uid-${name}`, resourceVersion: String(++revision) } }, owners: new Map(), times: new Map() });
  }

  const host = options.host ?? '127.0.0.1';
  const dir = mkdtempSync(path.join(tmpdir(), 'tos-kube-ca-'));
  const ca = certificateAuthority(dir, { name: 'Test Kubernetes CA', address: host });
  const server: Server = createServer(ca.issue(['kubernetes.default.svc']), (req, res) => {
    void handle(req, res).catch((err: Error) => status(res, 500, 'InternalError', err.message));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://kube');
    const body = await readBody(req);
    if (failing !== null) return status(res, failing, failing >= 500 ? 'ServiceUnavailable' : 'BadRequest', 'the test asked for this failure');
    if (req.headers.authorization !== `Bearer ${token}`) return status(res, 401, 'Unauthorized', 'Unauthorized');
    const discovery = discover(url.pathname);
    if (discovery) return json(res, 200, discovery);
    const target = route(url.pathname);
    if (!target) return status(res, 404, 'NotFound', 'the server could not find the requested resource');
    if (target.namespace !== undefined && !store.has(key(RESOURCE_TYPES[0], target.namespace))) {
      return status(res, 404, 'NotFound', `namespaces "${target.namespace}" not found`, { name: target.namespace, kind: 'namespaces' });
    }
    const id = key(target.type, target.name, target.namespace);
    if (req.method === 'GET') {
      const found = store.get(id);
      return found ? json(res, 200, found.object) : status(res, 404, 'NotFound', `${target.type.name} "${target.name}" not found`, { name: target.name, kind: target.type.name });
    }
    if (req.method !== 'PATCH') return status(res, 405, 'MethodNotAllowed', `${req.method} is not supported by this test server`);
    if ((req.headers['content-type'] ?? '').split(';')[0].trim() !== APPLY_PATCH) return status(res, 415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${APPLY_PATCH}`);
    const manager = url.searchParams.get('fieldManager');
    if (!manager) return status(res, 400, 'BadRequest', 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
    applies++;
    if (state.applyDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, state.applyDelayMs));
    if (res.destroyed) return;
    let config: Json;
    try {
      config = parseYaml(body) as Json;
    } catch (err) {
      return status(res, 400, 'BadRequest', `error decoding YAML: ${(err as Error).message}`);
    }
    if (!config || typeof config !== 'object' || Array.isArray(config)) return status(res, 400, 'BadRequest', 'the body must be an object');
    const apiVersion = target.type.group ? `${target.type.group}/${target.type.version}` : target.type.version;
    if (config.apiVersion !== apiVersion || config.kind !== target.type.kind) return status(res, 400, 'BadRequest', `the API version in the data (${config.apiVersion}) and kind (${config.kind}) do not match the URL (${apiVersion}, ${target.type.kind})`);
    if (!config.metadata?.name) return status(res, 422, 'Invalid', `${target.type.kind} "" is invalid: metadata.name: Required value: name is required`);
    if (config.metadata.name !== target.name) return status(res, 400, 'BadRequest', 'the name of the object does not match the name on the URL');
    const outcome = apply(store.get(id), config, manager, url.searchParams.get('force') === 'true', target.namespace);
    if ('conflicts' in outcome) {
      const causes = outcome.conflicts.map(({ manager: owner, field }) => ({ type: 'FieldManagerConflict', message: `conflict with "${owner}"`, field }));
      const summary = causes.map((cause) => `${cause.message}: ${cause.field}`).join('\n- ');
      return status(res, 409, 'Conflict', `Apply failed with ${causes.length} conflict${causes.length > 1 ? 's' : ''}: ${causes.length > 1 ? `\n- ${summary}` : summary}`, { causes });
    }
    const existed = store.has(id);
    const previous = store.get(id);
    const changed = !previous || JSON.stringify(strip(previous.object)) !== JSON.stringify(strip(outcome.object)) || JSON.stringify(ownersOf(previous)) !== JSON.stringify(ownersOf(outcome));
    const object = outcome.object;
    object.metadata.uid = previous?.object.metadata.uid ?? `uid-${Math.random().toString(36).slice(2)}`;
    object.metadata.creationTimestamp = previous?.object.metadata.creationTimestamp ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    object.metadata.resourceVersion = changed ? String(revision + 1) : previous!.object.metadata.resourceVersion;
    object.metadata.managedFields = managedFields(outcome, apiVersion);
    if (url.searchParams.get('dryRun') !== 'All') {
      if (changed) revision++;
      store.set(id, outcome);
    }
    return json(res, existed ? 200 : 201, object);
  }

  function discover(pathname: string): Json | null {
    if (pathname === '/api') return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] };
    if (pathname === '/apis') {
      const groups = [...new Set(RESOURCE_TYPES.filter((t) => t.group).map((t) => `${t.group}/${t.version}`))].map((gv) => {
        const [group, version] = gv.split('/');
        return { name: group, versions: [{ groupVersion: gv, version }], preferredVersion: { groupVersion: gv, version } };
      });
      return { kind: 'APIGroupList', apiVersion: 'v1', groups };
    }
    const list = /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))$/.exec(pathname);
    if (!list) return null;
    const [group, version] = list[1] ? ['', 'v1'] : [list[2], list[3]];
    const resources = RESOURCE_TYPES.filter((t) => t.group === group && t.version === version);
    if (resources.length === 0) return null;
    return {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: group ? `${group}/${version}` : version,
      resources: resources.map(({ name, kind, namespaced }) => ({ name, singularName: kind.toLowerCase(), namespaced, kind, verbs: VERBS })),
    };
  }

  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const address = server.address() as AddressInfo;
  const url = `https://${host}:${address.port}`;
  return {
    url,
    token,
    get: (kind, name, namespace) => {
      const type = RESOURCE_TYPES.find((t) => t.kind === kind);
      return type ? store.get(key(type, name, type.namespaced ? (namespace ?? 'default') : undefined))?.object : undefined;
    },
    failWith: (code) => void (failing = code),
    get applyDelayMs() {
      return state.applyDelayMs;
    },
    set applyDelayMs(ms: number) {
      state.applyDelayMs = ms;
    },
    get applies() {
      return applies;
    },
    kubeconfig: (as = token) =>
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        `  - name: test\n    cluster:\n      server: ${url}\n      certificate-authority-data: ${Buffer.from(ca.certificate).toString('base64')}`,
        'users:',
        `  - name: tester\n    user:\n      token: ${as}`,
        'contexts:',
        '  - name: test\n    context:\n      cluster: test\n      user: tester\n      namespace: default',
        'current-context: test',
        '',
      ].join('\n'),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(() => resolve(undefined)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function key(type: ResourceType, name: string, namespace?: string): string {
  return `${type.group}/${type.version}/${type.name}/${namespace ?? ''}/${name}`;
}

function route(pathname: string): { type: ResourceType; namespace?: string; name: string } | null {
  const match = /^\/(?:api\/v1|apis\/([^/]+)\/([^/]+))(?:\/namespaces\/([^/]+))?\/([^/]+)\/([^/]+)$/.exec(pathname);
  if (!match) return null;
  const [, group = '', version = 'v1', namespace, plural, name] = match;
  const type = RESOURCE_TYPES.find((t) => t.group === group && t.version === version && t.name === plural);
  if (!type || type.namespaced !== (namespace !== undefined)) return null;
  return { type, namespace: namespace && decodeURIComponent(namespace), name: decodeURIComponent(name) };
}

/** Server-side apply of `config` by `manager` onto `current`: the new state, or the conflicts. */
function apply(current: Stored | undefined, config: Json, manager: string, force: boolean, namespace: string | undefined): Stored | { conflicts: { manager: string; field: string }[] } {
  const applied = leaves(userFields(config));
  const live = current ? structuredClone(current.object) : { apiVersion: config.apiVersion, kind: config.kind, metadata: { name: config.metadata.name, ...(namespace && { namespace }) } };
  const owners = new Map([...(current?.owners ?? new Map<string, Set<string>>())].map(([name, fields]) => [name, new Set(fields)]));
  const conflicts: { manager: string; field: string }[] = [];
  for (const [path, value] of applied) {
    for (const [other, fields] of owners) {
      if (other === manager || !fields.has(path)) continue;
      if (JSON.stringify(valueAt(live, JSON.parse(path))) === JSON.stringify(value)) continue; // same value: shared ownership
      if (force) fields.delete(path);
      else conflicts.push({ manager: other, field: fieldPath(JSON.parse(path)) });
    }
  }
  if (conflicts.length > 0) return { conflicts };
  // Fields this manager applied before and dropped now go, unless someone else owns them too.
  for (const path of owners.get(manager) ?? []) {
    if (applied.has(path) || [...owners].some(([other, fields]) => other !== manager && fields.has(path))) continue;
    removeAt(live, JSON.parse(path));
  }
  for (const [path, value] of applied) setAt(live, JSON.parse(path), structuredClone(value));
  owners.set(manager, new Set(applied.keys()));
  for (const [name, fields] of owners) if (fields.size === 0) owners.delete(name);
  const times = new Map(current?.times ?? []);
  times.set(manager, new Date().toISOString().replace(/\.\d+Z$/, 'Z'));
  return { object: live, owners, times };
}

/** What a manager can own: everything but identity and server-set metadata. */
function userFields(config: Json): Json {
  const { apiVersion: _a, kind: _k, metadata = {}, status: _s, ...rest } = config;
  const { name: _n, namespace: _ns, uid: _u, resourceVersion: _r, managedFields: _m, creationTimestamp: _c, generation: _g, ...ownable } = metadata;
  return Object.keys(ownable).length > 0 ? { ...rest, metadata: ownable } : rest;
}

/** Leaf paths (JSON-encoded) → values; arrays and empty objects are leaves (atomic). */
function leaves(value: Json, prefix: string[] = [], into = new Map<string, unknown>()): Map<string, unknown> {
  for (const [name, member] of Object.entries(value)) {
    const path = [...prefix, name];
    if (member && typeof member === 'object' && !Array.isArray(member) && Object.keys(member).length > 0) leaves(member, path, into);
    else into.set(JSON.stringify(path), member);
  }
  return into;
}

function valueAt(object: Json, path: string[]): unknown {
  return path.reduce<any>((node, name) => (node && typeof node === 'object' ? node[name] : undefined), object);
}

function setAt(object: Json, path: string[], value: unknown): void {
  let node = object;
  for (const name of path.slice(0, -1)) node = node[name] && typeof node[name] === 'object' && !Array.isArray(node[name]) ? node[name] : (node[name] = {});
  node[path[path.length - 1]] = value;
}

function removeAt(object: Json, path: string[]): void {
  const parents: Json[] = [object];
  for (const name of path.slice(0, -1)) {
    const next = parents[parents.length - 1][name];
    if (!next || typeof next !== 'object') return;
    parents.push(next);
  }
  delete parents[parents.length - 1][path[path.length - 1]];
  // Objects left empty by the removal go too.
  for (let i = parents.length - 1; i > 0; i--) if (Object.keys(parents[i]).length === 0) delete parents[i - 1][path[i - 1]];
}

function fieldPath(path: string[]): string {
  return path.map((name) => `.${name}`).join('');
}

function strip(object: Json): Json {
  const { metadata: { resourceVersion: _r, managedFields: _m, ...metadata } = {}, ...rest } = object;
  return { ...rest, metadata };
}

function ownersOf(stored: Stored): [string, string[]][] {
  return [...stored.owners].map(([name, fields]) => [name, [...fields].sort()] as [string, string[]]).sort();
}

/** FieldsV1: `{"f:data":{"f:key":{}}}` per manager. */
function managedFields(stored: Stored, apiVersion: string): Json[] {
  return [...stored.owners].map(([manager, fields]) => {
    const fieldsV1: Json = {};
    for (const path of fields) setAt(fieldsV1, (JSON.parse(path) as string[]).map((name) => `f:${name}`), {});
    return { manager, operation: 'Apply', apiVersion, time: stored.times.get(manager), fieldsType: 'FieldsV1', fieldsV1 };
  });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

function json(res: ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function status(res: ServerResponse, code: number, reason: string, message: string, details?: Json): void {
  json(res, code, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details && { details }), code });
}
