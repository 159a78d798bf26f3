/**
 * The cluster a call applies to, through `@kubernetes/client-node` (1.x: ES modules only, loaded
 * with importEsm) with its HTTP transport replaced by the calling tool's `ctx.http`, so every
 * request to the apiserver passes the egress policy and stops with the call.
 */
import { existsSync } from 'node:fs';
import type * as K8s from '@kubernetes/client-node';
import { importEsm, ToolError, type ToolContext } from '@tos/sdk';

type Kubernetes = typeof K8s;
export type KubernetesObject = K8s.KubernetesObject;
export type ObjectApi = K8s.KubernetesObjectApi;

/** Where a pod finds its service account (in-cluster configuration). */
const IN_CLUSTER_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';
/** Largest apiserver answer read (an object with a long managedFields history is a few hundred KiB). */
const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

let loaded: Promise<Kubernetes> | undefined;

function kubernetes(): Promise<Kubernetes> {
  loaded ??= importEsm<Kubernetes>('@kubernetes/client-node');
  return loaded;
}

export interface Cluster {
  api: ObjectApi;
  /** The resource serving a kind, found through API discovery (cached per API version); undefined when none does. */
  discover(apiVersion: string, kind: string): Promise<{ namespaced: boolean } | undefined>;
  /** The namespace of the kubeconfig's current context ('default' when it names none). */
  contextNamespace: string;
  k8s: Kubernetes;
}

/** KUBECONFIG when set, else the in-cluster service account; neither is a clear error. */
export async function connect(ctx: ToolContext): Promise<Cluster> {
  const k8s = await kubernetes();
  const kc = new k8s.KubeConfig();
  const file = ctx.config.KUBECONFIG as string | undefined;
  try {
    if (file) kc.loadFromFile(file);
    else if (existsSync(IN_CLUSTER_TOKEN)) kc.loadFromCluster();
    else throw new ToolError('No cluster is configured: set KUBECONFIG to a kubeconfig file, or run the service in a pod with a service account', { suggestion: 'Ask the operator to set KUBECONFIG.' });
  } catch (err) {
    if (err instanceof ToolError) throw err;
    throw new ToolError(`The kubeconfig in KUBECONFIG cannot be read: ${(err as Error).message.split('\n')[0]}`);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new ToolError('The kubeconfig in KUBECONFIG has no current cluster');
  const configuration = k8s.createConfiguration({
    baseServer: new k8s.ServerConfiguration(cluster.server, {}),
    authMethods: { default: kc },
    httpApi: k8s.wrapHttpLibrary({ send: (request) => send(k8s, ctx, request) }),
  });
  // `resource()` is the client's discovery, protected in its typings.
  const api = new (class extends k8s.KubernetesObjectApi {
    discover(apiVersion: string, kind: string) {
      return this.resource(apiVersion, kind);
    }
  })(configuration);
  const contextNamespace = kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
  return { api, discover: (apiVersion, kind) => api.discover(apiVersion, kind), contextNamespace, k8s };
}

/** One apiserver request through ctx.http: the kubeconfig's headers (token) and CA, the policy's connection. */
async function send(k8s: Kubernetes, ctx: ToolContext, request: K8s.RequestContext): Promise<K8s.ResponseContext> {
  const tls = (request.getAgent() as { options?: { ca?: string | Buffer; cert?: unknown; rejectUnauthorized?: boolean } } | undefined)?.options;
  if (tls?.cert) throw new ToolError('Client-certificate authentication is not supported: use a token (a service account) in the kubeconfig');
  const body = request.getBody();
  const response = await ctx.http.request(request.getUrl(), {
    method: request.getHttpMethod().toString(),
    headers: request.getHeaders(),
    body: typeof body === 'string' ? body : undefined,
    maxResponseBytes: MAX_RESPONSE_BYTES,
    parameter: 'KUBECONFIG',
    ...(tls && { tls: { ...(tls.ca && { ca: tls.ca.toString() }), ...(tls.rejectUnauthorized === false && { rejectUnauthorized: false }) } }),
  });
  return new k8s.ResponseContext(response.status, response.headers, { text: async () => response.text(), binary: async () => response.body });
}
