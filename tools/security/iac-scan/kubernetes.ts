/**
 * Kubernetes manifests: every document of a (multi-document) YAML file with `apiVersion` and
 * `kind` (List items too), its pod template found whatever the workload kind, each finding at the
 * line of the field at fault (or of the nearest enclosing field when the fault is a missing one).
 */
import { finding, KUBERNETES_RULES as R, SECRET_NAME, type IacFinding, type IacRule } from './rules';
import { arrayOf, isObject, parseYamlFile, valueAt, type Json, type Path } from './yaml-documents';

/** Where each workload kind keeps its pod spec. */
const POD_SPEC_PATHS: Readonly<Record<string, Path>> = {
  Pod: ['spec'],
  Deployment: ['spec', 'template', 'spec'],
  StatefulSet: ['spec', 'template', 'spec'],
  DaemonSet: ['spec', 'template', 'spec'],
  ReplicaSet: ['spec', 'template', 'spec'],
  ReplicationController: ['spec', 'template', 'spec'],
  Job: ['spec', 'template', 'spec'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template', 'spec'],
};
/** Pods that run to completion: probes are not expected. */
const RUN_TO_COMPLETION = new Set(['Job', 'CronJob']);
const CAPABILITIES_NEVER_NEEDED = new Set(['ALL', 'SYS_ADMIN']);

export interface ManifestScan {
  /** False when no document of the file is a Kubernetes object. */
  kubernetes: boolean;
  findings: IacFinding[];
  errors: string[];
}

export function scanManifest(file: string, text: string): ManifestScan {
  const parsed = parseYamlFile(text);
  const result: ManifestScan = { kubernetes: false, findings: [], errors: parsed.errors };
  for (const { root, lineAt } of parsed.documents) {
    if (!isObject(root)) continue;
    const objects: Array<[Json, Path]> = root.kind === 'List' && Array.isArray(root.items) ? root.items.map((item, index) => [item as Json, ['items', index]]) : [[root, []]];
    for (const [object, base] of objects) {
      if (!isObject(object) || typeof object.apiVersion !== 'string' || typeof object.kind !== 'string') continue;
      result.kubernetes = true;
      result.findings.push(...checkObject(object, (path, found, message, what) => finding(found, { file, line: lineAt([...base, ...path]), object: what }, message)));
    }
  }
  return result;
}

type Report = (path: Path, rule: IacRule, message: string, object: string) => IacFinding;

function checkObject(object: Json, report: Report): IacFinding[] {
  const kind = object.kind as string;
  const name = `${kind}/${(object.metadata as Json | undefined)?.name ?? '?'}`;
  if (kind === 'Role' || kind === 'ClusterRole') return checkRole(object, name, report);
  if (kind === 'RoleBinding' || kind === 'ClusterRoleBinding') return checkBinding(object, name, report);
  const specPath = POD_SPEC_PATHS[kind];
  const spec = specPath && valueAt(object, specPath);
  if (!isObject(spec)) return [];
  const findings: IacFinding[] = [];
  const at = (path: Path, found: IacRule, message: string, what = name) => findings.push(report([...specPath, ...path], found, message, what));

  for (const [field, found] of [['hostNetwork', R.hostNetwork], ['hostPID', R.hostPid], ['hostIPC', R.hostIpc]] as const) {
    if (spec[field] === true) at([field], found, `${field}: true`);
  }
  for (const [index, volume] of arrayOf(spec.volumes).entries()) {
    if (isObject(volume) && isObject(volume.hostPath)) at(['volumes', index, 'hostPath'], R.hostPath, `Volume '${volume.name}' mounts ${String(volume.hostPath.path)} from the node`);
  }
  const podContext = isObject(spec.securityContext) ? spec.securityContext : {};
  for (const group of ['initContainers', 'containers'] as const) {
    for (const [index, container] of arrayOf(spec[group]).entries()) {
      if (!isObject(container)) continue;
      const path: Path = [group, index];
      const what = `${name} container ${String(container.name ?? index)}`;
      checkContainer(container, podContext, { probes: group === 'containers' && !RUN_TO_COMPLETION.has(kind) }, (field, found, message) => at([...path, ...field], found, message, what));
    }
  }
  return findings;
}

function checkContainer(container: Json, podContext: Json, expect: { probes: boolean }, at: (path: Path, rule: IacRule, message: string) => void): void {
  const context = isObject(container.securityContext) ? container.securityContext : {};
  const effective = (field: string) => context[field] ?? podContext[field];
  if (context.privileged === true) at(['securityContext', 'privileged'], R.privileged, 'privileged: true gives the container every capability of the node');
  else if (context.allowPrivilegeEscalation !== false) at(['securityContext', 'allowPrivilegeEscalation'], R.privilegeEscalation, 'allowPrivilegeEscalation is not false');
  const user = effective('runAsUser');
  if (user === 0) at(context.runAsUser === 0 ? ['securityContext', 'runAsUser'] : ['name'], R.rootUser, 'runAsUser: 0');
  else if (effective('runAsNonRoot') !== true && !(typeof user === 'number' && user > 0)) at(['securityContext', 'runAsNonRoot'], R.nonRootUnset, 'Neither runAsNonRoot: true nor a non-zero runAsUser is set');
  if (context.readOnlyRootFilesystem !== true) at(['securityContext', 'readOnlyRootFilesystem'], R.writableRoot, 'readOnlyRootFilesystem is not true');

  const capabilities = isObject(context.capabilities) ? context.capabilities : {};
  const added = arrayOf(capabilities.add).map(String);
  if (added.length > 0) {
    const worst = added.filter((capability) => CAPABILITIES_NEVER_NEEDED.has(capability.toUpperCase()));
    at(['securityContext', 'capabilities', 'add'], R.addedCapabilities, `Adds ${added.join(', ')}${worst.length > 0 ? ` (${worst.join(', ')} amounts to root on the node)` : ''}`);
  }
  if (!arrayOf(capabilities.drop).some((capability) => String(capability).toUpperCase() === 'ALL')) at(['securityContext', 'capabilities', 'drop'], R.capabilitiesNotDropped, 'capabilities.drop does not include ALL');

  const seccomp = (effective('seccompProfile') as Json | undefined)?.type;
  if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost') at(['securityContext', 'seccompProfile'], R.seccomp, seccomp === undefined ? 'No seccompProfile set' : `seccompProfile.type: ${String(seccomp)}`);

  const image = typeof container.image === 'string' ? container.image : '';
  const tag = imageTag(image);
  if (tag === undefined || tag === 'latest') at(['image'], R.latestImage, tag === undefined ? `Image ${image} has no tag` : `Image ${image} uses :latest`);

  const resources = isObject(container.resources) ? container.resources : {};
  const missing = (group: unknown) => ['cpu', 'memory'].filter((resource) => !isObject(group) || group[resource] === undefined);
  if (missing(resources.limits).length > 0) at(['resources', 'limits'], R.noLimits, `No ${missing(resources.limits).join(' or ')} limit`);
  if (missing(resources.requests).length > 0) at(['resources', 'requests'], R.noRequests, `No ${missing(resources.requests).join(' or ')} request`);
  if (expect.probes && container.livenessProbe === undefined) at(['livenessProbe'], R.noLiveness, 'No livenessProbe');
  if (expect.probes && container.readinessProbe === undefined) at(['readinessProbe'], R.noReadiness, 'No readinessProbe');

  for (const [index, variable] of arrayOf(container.env).entries()) {
    if (isObject(variable) && typeof variable.name === 'string' && SECRET_NAME.test(variable.name) && typeof variable.value === 'string' && variable.value !== '') {
      at(['env', index, 'value'], R.secretInEnv, `${variable.name} is set to a literal value`);
    }
  }
  for (const [index, port] of arrayOf(container.ports).entries()) {
    if (isObject(port) && port.hostPort !== undefined) at(['ports', index, 'hostPort'], R.hostPort, `hostPort ${String(port.hostPort)}`);
  }
}

function checkRole(role: Json, name: string, report: Report): IacFinding[] {
  return arrayOf(role.rules).flatMap((entry, index) => {
    if (!isObject(entry)) return [];
    const wild = (['verbs', 'resources'] as const).filter((field) => arrayOf(entry[field]).includes('*'));
    return wild.length === 0 ? [] : [report(['rules', index, wild[0]], R.rbacWildcard, `rules[${index}] grants "*" ${wild.join(' and ')}`, name)];
  });
}

/**
 * Built-in roles that amount to control of the namespace or the cluster: cluster-admin (every
 * verb on everything), admin and edit (read secrets, run workloads as any service account).
 */
const PRIVILEGED_ROLES = new Set(['cluster-admin', 'admin', 'edit']);
/** Subjects that stand for everyone (or every workload): a binding to them is worse. */
const BROAD_SUBJECTS = new Set(['system:anonymous', 'system:unauthenticated', 'system:authenticated', 'system:serviceaccounts']);

function checkBinding(binding: Json, name: string, report: Report): IacFinding[] {
  const role = isObject(binding.roleRef) ? String(binding.roleRef.name ?? '') : '';
  if (!PRIVILEGED_ROLES.has(role)) return [];
  const subjects = arrayOf(binding.subjects).filter(isObject).map((subject) => `${String(subject.kind ?? '?')} ${String(subject.namespace ? `${String(subject.namespace)}/` : '')}${String(subject.name ?? '?')}`);
  const broad = arrayOf(binding.subjects).filter(isObject).some((subject) => BROAD_SUBJECTS.has(String(subject.name)));
  return [report(['roleRef', 'name'], R.rbacPrivilegedBinding, `Binds ${role} to ${subjects.join(', ') || 'no subject'}${broad ? ' (a group that stands for every user or service account)' : ''}`, name)];
}

/** The tag of an image reference; `digest` when pinned by digest; undefined when untagged. */
export function imageTag(image: string): string | undefined {
  if (image.includes('@')) return 'digest';
  const lastSegment = image.slice(image.lastIndexOf('/') + 1);
  const colon = lastSegment.indexOf(':');
  return colon === -1 ? undefined : lastSegment.slice(colon + 1);
}
