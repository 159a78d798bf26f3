/** iac-scan's rules: one catalogue for the checks, the input enum and the documentation table. */

export const IAC_SEVERITIES = ['critical', 'high', 'medium', 'low'] as const;
export type IacSeverity = (typeof IAC_SEVERITIES)[number];

export interface IacRule {
  id: string;
  severity: IacSeverity;
  title: string;
  remediation: string;
}

const rule = (id: string, severity: IacSeverity, title: string, remediation: string): IacRule => ({ id, severity, title, remediation });

export const KUBERNETES_RULES = {
  privileged: rule('k8s/privileged-container', 'critical', 'Container runs privileged', 'Remove securityContext.privileged or set it to false; grant only the capabilities needed.'),
  privilegeEscalation: rule('k8s/allow-privilege-escalation', 'medium', 'Container may gain more privileges than its parent', 'Set securityContext.allowPrivilegeEscalation: false.'),
  rootUser: rule('k8s/run-as-root-user', 'high', 'Container runs as user 0 (root)', 'Set securityContext.runAsUser to a non-zero UID and runAsNonRoot: true.'),
  nonRootUnset: rule('k8s/run-as-non-root-unset', 'medium', 'Container may run as root', 'Set securityContext.runAsNonRoot: true (pod or container) and a non-zero runAsUser.'),
  writableRoot: rule('k8s/writable-root-filesystem', 'low', 'Root filesystem is writable', 'Set securityContext.readOnlyRootFilesystem: true and mount writable volumes where needed.'),
  addedCapabilities: rule('k8s/added-capabilities', 'high', 'Container adds Linux capabilities', 'Remove securityContext.capabilities.add, or keep only the one capability the process needs (never SYS_ADMIN or ALL).'),
  capabilitiesNotDropped: rule('k8s/capabilities-not-dropped', 'low', 'Container keeps the default capabilities', 'Set securityContext.capabilities.drop: ["ALL"] and add back only what is needed.'),
  latestImage: rule('k8s/image-latest-or-untagged', 'medium', 'Image uses :latest or no tag', 'Pin the image to a version tag or, better, a digest (image@sha256:…).'),
  noLimits: rule('k8s/missing-resource-limits', 'medium', 'Container has no CPU or memory limit', 'Set resources.limits.cpu and resources.limits.memory.'),
  noRequests: rule('k8s/missing-resource-requests', 'low', 'Container has no CPU or memory request', 'Set resources.requests.cpu and resources.requests.memory so the scheduler can place the pod.'),
  noLiveness: rule('k8s/missing-liveness-probe', 'low', 'Container has no liveness probe', 'Add a livenessProbe so a hung process is restarted.'),
  noReadiness: rule('k8s/missing-readiness-probe', 'low', 'Container has no readiness probe', 'Add a readinessProbe so traffic only reaches a ready container.'),
  secretInEnv: rule('k8s/secret-in-env', 'high', 'Secret-looking environment variable has a literal value', 'Move the value into a Secret and use env[].valueFrom.secretKeyRef.'),
  hostPort: rule('k8s/host-port', 'medium', 'Container binds a host port', 'Remove ports[].hostPort; expose the pod through a Service instead.'),
  hostNetwork: rule('k8s/host-network', 'high', "Pod shares the node's network namespace", 'Remove spec.hostNetwork or set it to false.'),
  hostPid: rule('k8s/host-pid', 'high', "Pod shares the node's process namespace", 'Remove spec.hostPID or set it to false.'),
  hostIpc: rule('k8s/host-ipc', 'high', "Pod shares the node's IPC namespace", 'Remove spec.hostIPC or set it to false.'),
  hostPath: rule('k8s/host-path-volume', 'high', "Pod mounts a directory of the node (hostPath)", 'Use a PersistentVolumeClaim, emptyDir, ConfigMap or Secret instead of hostPath.'),
  seccomp: rule('k8s/seccomp-unconfined', 'low', 'No seccomp profile (or Unconfined)', 'Set securityContext.seccompProfile.type: RuntimeDefault.'),
  rbacWildcard: rule('k8s/rbac-wildcard', 'high', 'Role grants every verb or resource (*)', 'List the verbs and resources the subject needs instead of "*".'),
} as const;

export const DOCKERFILE_RULES = {
  noUser: rule('dockerfile/no-user', 'high', 'Image runs as root (no USER in the final stage)', 'Add a USER instruction with a non-root user to the final stage.'),
  userRoot: rule('dockerfile/user-root', 'high', 'Final USER is root', 'Switch to a non-root user (USER app or USER 10001) after the steps that need root.'),
  latestBase: rule('dockerfile/base-image-latest-or-untagged', 'medium', 'Base image uses :latest or no tag', 'Pin FROM to a version tag or a digest (image@sha256:…).'),
  curlPipeShell: rule('dockerfile/curl-pipe-shell', 'high', 'Downloads a script and pipes it to a shell', 'Download to a file, verify its checksum or signature, then run it.'),
  addUrl: rule('dockerfile/add-from-url', 'medium', 'ADD fetches a URL', 'Use RUN curl/wget with a checksum check (or ADD --checksum=…), or COPY a vendored file.'),
  addLocal: rule('dockerfile/add-instead-of-copy', 'low', 'ADD used for a plain local file', 'Use COPY; ADD only when unpacking a local archive is intended.'),
  secretInEnv: rule('dockerfile/secret-in-env', 'high', 'Secret-looking ENV or ARG has a value in the Dockerfile', 'Pass secrets at build time with RUN --mount=type=secret, or at run time; never bake them into layers.'),
  noHealthcheck: rule('dockerfile/missing-healthcheck', 'low', 'Final stage has no HEALTHCHECK', 'Add HEALTHCHECK CMD … (or rely on the orchestrator\'s probes and say so).'),
  exposeSsh: rule('dockerfile/expose-ssh', 'medium', 'Image exposes port 22 (SSH)', 'Do not run SSH in containers; use docker exec / kubectl exec.'),
  chmod777: rule('dockerfile/chmod-777', 'medium', 'Files made world-writable (chmod 777)', 'Grant the least permissions needed (e.g. chmod 755, chown to the app user).'),
  sudo: rule('dockerfile/sudo', 'medium', 'RUN uses sudo', 'Build steps already run as root: drop sudo; use USER to change users.'),
  aptUpdateAlone: rule('dockerfile/apt-get-update-alone', 'low', 'apt-get update in a RUN without an install', 'Run apt-get update && apt-get install … in one RUN so the cache layer is never stale.'),
} as const;

export const IAC_RULES: readonly IacRule[] = [...Object.values(KUBERNETES_RULES), ...Object.values(DOCKERFILE_RULES)];
export const IAC_RULE_IDS = IAC_RULES.map((candidate) => candidate.id);

/** Names whose literal values in ENV/env are taken for secrets. */
export const SECRET_NAME = /passw(?:or)?d|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credential/i;

export interface IacFinding {
  rule: string;
  severity: IacSeverity;
  title: string;
  file: string;
  line: number;
  /** What the finding is about: `Deployment/web container app`, `stage build`, … */
  object: string;
  message: string;
  remediation: string;
}

export function finding(found: IacRule, where: { file: string; line: number; object: string }, message: string): IacFinding {
  return { rule: found.id, severity: found.severity, title: found.title, ...where, message, remediation: found.remediation };
}
