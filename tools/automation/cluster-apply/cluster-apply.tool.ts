import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { countBy, Tool, ToolError, type ToolContext, type ToolHandler, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';
import { type Cluster, connect, KUBERNETES_SETTINGS, type KubernetesObject } from '../../integrations/kubernetes';
import { MAX_OBJECTS } from './limits';
import type { ManifestObject } from './manifest';

type ClusterApplyInput = ToolInput<typeof definition>;
type ClusterApplyOutput = ToolOutput<typeof definition>;

type ApplyResult = 'created' | 'configured' | 'unchanged';

type AppliedObject = ToolOutput<typeof definition>['objects'][number];

interface Conflict {
  object: string;
  field: string;
  manager: string;
}

const APPLY_PATCH = 'application/apply-patch+yaml';
const NAMESPACE_PATTERN = '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$';

const definition = defineTool({
  id: 'cluster-apply',
  name: 'Cluster Apply',
  category: 'automation',
  description:
    'Server-side apply of a Kubernetes manifest (one or more YAML documents, List items too) to the cluster in KUBECONFIG: each object is applied with a field manager, so fields other managers own are never overwritten silently — a conflict fails the call naming the fields and their managers, unless force_conflicts takes them over. Kinds, custom ones included, are found through API discovery. dry_run asks the apiserver to check and compute everything without persisting. Reports per object whether it was created, configured or unchanged.',
  version: '1.0.0',
  effects: 'destructive',
  idempotent: true,
  open_world: true,
  timeout: 120,
  task_support: 'optional',
  rate_limit: 30,
  config: KUBERNETES_SETTINGS,
  input: {
    type: 'object',
    properties: {
      manifest: { type: 'string', minLength: 1, maxLength: 1_048_576, description: `Kubernetes objects as YAML (or JSON), documents separated by ---; at most ${MAX_OBJECTS} objects.` },
      namespace: {
        type: 'string',
        maxLength: 63,
        pattern: NAMESPACE_PATTERN,
        description: "Namespace of namespaced objects that name none (default: the kubeconfig context's, else 'default'). When given, an object naming another namespace is refused.",
      },
      dry_run: { type: 'boolean', default: false, description: 'Server-side dry run (dryRun=All): validated, defaulted and checked for conflicts by the apiserver, nothing persisted.' },
      force_conflicts: { type: 'boolean', default: false, description: 'Take over fields other field managers own instead of failing on them.' },
      confirm: {
        type: 'boolean',
        default: false,
        description:
          'Ask the caller to confirm before changing anything: the call first dry-runs the manifest, then asks (an elicitation naming what would be created and configured) and applies only on an accepted answer. A sync call can be asked: MCP 2026-07-28 tools/call, or REST invoke (answer with input_responses and request_state). Ignored with dry_run, and when nothing would change.',
      },
      field_manager: { type: 'string', default: 'tool-orchestration-service', minLength: 1, maxLength: 128, pattern: '^[\\x21-\\x7e]([\\x20-\\x7e]*[\\x21-\\x7e])?$', description: 'The field manager the applied fields are recorded under.' },
    },
    required: ['manifest'],
  },
  output: {
    type: 'object',
    properties: {
      dry_run: { type: 'boolean', description: 'Whether nothing was persisted.' },
      field_manager: { type: 'string', description: 'The field manager used.' },
      objects: {
        type: 'array',
        description: 'Per object, in manifest order: kind, api_version, name, namespace (null when cluster-scoped), result (created, configured, unchanged) and the resource_version after the apply.',
        items: {
          type: 'object',
          properties: {
            kind: { type: 'string' },
            api_version: { type: 'string' },
            name: { type: 'string' },
            namespace: { type: ['string', 'null'] },
            result: { type: 'string', enum: ['created', 'configured', 'unchanged'] },
            resource_version: { type: 'string' },
          },
          required: ['kind', 'api_version', 'name', 'namespace', 'result', 'resource_version'],
        },
      },
      counts: {
        type: 'object',
        description: 'How many objects were created, configured and unchanged.',
        properties: { created: { type: 'integer' }, configured: { type: 'integer' }, unchanged: { type: 'integer' } },
      },
    },
    required: ['dry_run', 'field_manager', 'objects', 'counts'],
  },
  examples: [
    {
      name: 'Check a ConfigMap against the cluster without changing it',
      input: {
        manifest: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shop-settings\ndata:\n  currency: EUR\n',
        namespace: 'default',
        dry_run: true,
      },
      output: {
        dry_run: true,
        field_manager: 'tool-orchestration-service',
        objects: [{ kind: 'ConfigMap', api_version: 'v1', name: 'shop-settings', namespace: 'default', result: 'created', resource_version: '101' }],
        counts: { created: 1, configured: 0, unchanged: 0 },
      },
      varies: ['objects.0.resource_version'],
    },
  ],
});

@Tool(definition)
export class ClusterApplyTool implements ToolHandler<typeof definition> {
  async execute(input: ClusterApplyInput, ctx: ToolContext<typeof definition>): Promise<ClusterApplyOutput> {
    // The YAML parser loads on the first call, not with the catalogue.
    const { parseManifest } = await import('./manifest');
    const manifest = parseManifest(input.manifest);
    const cluster = await connect(ctx);
    if (input.confirm && !input.dry_run) {
      // The question comes before anything changes: a call asked again runs from the start.
      const plan = await applyAll(cluster, manifest, { ...input, dry_run: true }, ctx, 'planned');
      if (plan.some(({ result }) => result !== 'unchanged')) await confirmPlan(plan, ctx);
    }
    const objects = await applyAll(cluster, manifest, input, ctx, input.dry_run ? 'would be' : '');
    const counts = countBy(['created', 'configured', 'unchanged'], objects, ({ result }) => result);
    return { dry_run: input.dry_run, field_manager: input.field_manager, objects, counts };
  }
}

async function applyAll(cluster: Cluster, manifest: ManifestObject[], input: ClusterApplyInput, ctx: ToolContext, verb: string): Promise<AppliedObject[]> {
  const objects: AppliedObject[] = [];
  for (const [index, entry] of manifest.entries()) {
    ctx.signal.throwIfAborted();
    const applied = await applyOne(cluster, entry, input, objects);
    objects.push(applied);
    ctx.progress(((index + 1) / manifest.length) * 100, `${applied.kind} ${describe(applied.namespace, applied.name)} ${[verb, applied.result].filter(Boolean).join(' ')}`);
  }
  return objects;
}

/**
 * Asks the caller to accept the changes the dry run found, or stops. The question's key holds a
 * digest of the plan: if the cluster changed between the question and the answer, the plan the
 * answer accepted is not this one, and the caller is asked again.
 */
async function confirmPlan(plan: AppliedObject[], ctx: ToolContext): Promise<void> {
  const changes = plan.filter(({ result }) => result !== 'unchanged').map(({ kind, namespace, name, result }) => `${kind} ${describe(namespace, name)} ${result}`);
  const digest = createHash('sha256').update(JSON.stringify(changes)).digest('hex').slice(0, 16);
  const unchanged = plan.length - changes.length;
  const answer = await ctx.requestInput(`confirm_apply_${digest}`, {
    method: 'elicitation/create',
    params: {
      message: `Apply to the cluster? ${changes.join('; ')}${unchanged > 0 ? ` (${unchanged} unchanged)` : ''}.`,
      requestedSchema: { type: 'object', properties: { apply: { type: 'boolean', title: 'Apply these changes' } }, required: ['apply'] },
    },
  });
  const accepted = answer.action === 'accept' && (answer.content as { apply?: unknown } | undefined)?.apply === true;
  if (!accepted) {
    throw new ToolError(`Not applied: the caller did not confirm (${String(answer.action)}); nothing was changed`, { code: 'INVALID_INPUT', details: { parameter: 'confirm', action: answer.action } });
  }
}

async function applyOne(cluster: Cluster, { object, document }: ManifestObject, input: ClusterApplyInput, done: AppliedObject[]): Promise<AppliedObject> {
  const { api, discover } = cluster;
  const { apiVersion, kind, metadata } = object;
  const resource = await upstream(() => discover(apiVersion, kind), done);
  if (!resource) {
    throw new ToolError(`Unknown kind: the cluster serves no ${kind} in ${apiVersion} (document ${document}); check apiVersion, or install its CustomResourceDefinition first`, {
      code: 'INVALID_INPUT',
      details: { parameter: 'manifest', document, api_version: apiVersion, kind },
    });
  }
  const spec = { ...object, metadata: { ...metadata } };
  if (resource.namespaced) {
    if (input.namespace !== undefined && metadata.namespace !== undefined && metadata.namespace !== input.namespace) {
      throw new ToolError(`${kind} ${metadata.name} (document ${document}) names namespace '${metadata.namespace}', but the call applies to '${input.namespace}'`, {
        code: 'INVALID_INPUT',
        details: { parameter: 'namespace', document },
      });
    }
    spec.metadata.namespace = metadata.namespace ?? input.namespace ?? cluster.contextNamespace;
  } else {
    delete spec.metadata.namespace;
  }
  const before = await upstream(() => api.read(spec as KubernetesObject & { metadata: { name: string } }), done, { notFound: true });
  const after = await upstream(
    () => api.patch(spec, undefined, input.dry_run ? 'All' : undefined, input.field_manager, input.force_conflicts, APPLY_PATCH as never),
    done,
    { object: `${kind} ${describe(spec.metadata.namespace ?? null, metadata.name)}` },
  );
  return {
    kind,
    api_version: apiVersion,
    name: metadata.name,
    namespace: resource.namespaced ? spec.metadata.namespace! : null,
    result: !before ? 'created' : isDeepStrictEqual(comparable(before), comparable(after!)) ? 'unchanged' : 'configured',
    resource_version: after!.metadata?.resourceVersion ?? '',
  };
}

/** The object without what changes on every write (resourceVersion, the apply times). */
function comparable(object: KubernetesObject): unknown {
  const { resourceVersion: _version, managedFields, ...metadata } = object.metadata ?? {};
  return { ...object, metadata: { ...metadata, managedFields: managedFields?.map(({ time: _time, ...field }) => field) } };
}

function describe(namespace: string | null, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/**
 * One apiserver call; its failures as the client sees them: a conflict names fields and managers,
 * a refusal of the object is INVALID_INPUT, 5xx and network errors are retryable. Each error says
 * what was already applied.
 */
async function upstream<T>(call: () => Promise<T>, done: AppliedObject[], expect: { notFound?: boolean; object?: string } = {}): Promise<T | undefined> {
  try {
    return await call();
  } catch (err) {
    const status = (err as { code?: unknown }).code;
    if (typeof status !== 'number') throw err instanceof ToolError ? withApplied(err, done) : err;
    if (status === 404 && expect.notFound) return undefined;
    throw withApplied(apiError(status, (err as { body?: unknown }).body, expect.object), done);
  }
}

function apiError(status: number, body: unknown, object: string | undefined): ToolError {
  const parsed = parseStatus(body);
  const message = parsed?.message ?? `HTTP ${status}`;
  if (status === 409 && parsed?.reason === 'Conflict' && object) {
    const conflicts: Conflict[] = (parsed.details?.causes ?? [])
      .filter((cause) => cause.type === 'FieldManagerConflict')
      .map((cause) => ({ object, field: cause.field ?? '', manager: /conflict with "([^"]*)"/.exec(cause.message ?? '')?.[1] ?? '' }));
    const list = conflicts.map(({ field, manager }) => `${field} (owned by ${manager})`).join(', ');
    return new ToolError(`Apply conflict on ${object}: ${list}`, {
      code: 'INVALID_INPUT',
      details: { parameter: 'manifest', conflicts },
      suggestion: 'Leave those fields out of the manifest, or set force_conflicts to take them over.',
    });
  }
  if (status === 401 || status === 403) return new ToolError(`The cluster refused the credentials in KUBECONFIG (HTTP ${status}): ${message}`, { details: { upstream: { service: 'kubernetes', status } } });
  if (status >= 400 && status < 500) return new ToolError(`The cluster refused ${object ?? 'the request'} (HTTP ${status}): ${message}`, { code: 'INVALID_INPUT', details: { parameter: 'manifest', upstream: { service: 'kubernetes', status } } });
  return ToolError.fromResponse('kubernetes', { status, headers: {} }, `The Kubernetes API answered HTTP ${status}: ${message}`);
}

interface Status {
  message?: string;
  reason?: string;
  details?: { causes?: { type?: string; message?: string; field?: string }[] };
}

function parseStatus(body: unknown): Status | null {
  try {
    const value = typeof body === 'string' ? JSON.parse(body) : body;
    return value && typeof value === 'object' ? (value as Status) : null;
  } catch {
    return null;
  }
}

function withApplied(error: ToolError, done: AppliedObject[]): ToolError {
  if (done.length === 0) return error;
  const applied = done.map(({ kind, namespace, name, result }) => `${kind} ${describe(namespace, name)} (${result})`).join(', ');
  return new ToolError(`${error.message}. Applied before the failure: ${applied}`, {
    code: error.code,
    retryable: error.retryable,
    retryAfter: error.retryAfter,
    suggestion: error.suggestion,
    details: { ...error.details, applied: done },
  });
}
