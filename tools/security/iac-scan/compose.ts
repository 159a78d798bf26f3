/**
 * Docker Compose files (the Compose Specification: `services:` at the top): each service's
 * privileges, namespaces, mounts, environment, image and published ports.
 */
import { imageTag } from './kubernetes';
import { COMPOSE_RULES as R, finding, SECRET_NAME, type IacFinding, type IacRule } from './rules';
import { arrayOf, isObject, type Json, type Path, type YamlDocument } from './yaml-documents';

const DOCKER_SOCKET = /(?:^|\/)(?:docker|containerd|podman)\.sock$/;
const HOST_SYSTEM_DIRECTORIES = new Set(['/', '/etc', '/proc', '/sys', '/root', '/boot', '/dev', '/var/run', '/run', '/var/lib/docker', '/usr', '/lib', '/bin', '/sbin', '/home']);
const DANGEROUS_CAPABILITIES = new Set(['ALL', 'SYS_ADMIN', 'NET_ADMIN', 'SYS_PTRACE', 'SYS_MODULE', 'DAC_READ_SEARCH', 'SYS_RAWIO', 'BPF']);

/** Whether a YAML document is a Compose file: a `services` map of service maps, and no Kubernetes `apiVersion`. */
export function isCompose(root: unknown): root is Json {
  return isObject(root) && root.apiVersion === undefined && isObject(root.services) && Object.values(root.services).every((service) => service === null || isObject(service));
}

export function scanCompose(file: string, document: YamlDocument): IacFinding[] {
  const findings: IacFinding[] = [];
  for (const [name, service] of Object.entries((document.root as Json).services as Json)) {
    if (!isObject(service)) continue;
    const at = (path: Path, found: IacRule, message: string) => findings.push(finding(found, { file, line: document.lineAt(['services', name, ...path]), object: `service ${name}` }, message));
    checkService(service, at);
  }
  return findings;
}

function checkService(service: Json, at: (path: Path, rule: IacRule, message: string) => void): void {
  if (service.privileged === true) at(['privileged'], R.privileged, 'privileged: true gives the container every capability and every device of the host');
  if (service.network_mode === 'host') at(['network_mode'], R.hostNetwork, 'network_mode: host');
  for (const field of ['pid', 'ipc'] as const) if (service[field] === 'host') at([field], R.hostNamespace, `${field}: host`);

  for (const [index, volume] of arrayOf(service.volumes).entries()) {
    const source = bindSource(volume);
    if (source === undefined) continue;
    if (DOCKER_SOCKET.test(source)) at(['volumes', index], R.dockerSocket, `Mounts ${source}: the container controls the Docker daemon, and so the host`);
    else if (HOST_SYSTEM_DIRECTORIES.has(source.replace(/\/+$/, '') || '/')) at(['volumes', index], R.sensitiveMount, `Mounts ${source} from the host`);
  }

  const environment = service.environment;
  const variables: Array<[string, unknown, Path]> = Array.isArray(environment)
    ? environment.map((entry, index) => {
        const [key, ...value] = String(entry).split('=');
        return [key, value.length > 0 ? value.join('=') : undefined, ['environment', index]];
      })
    : isObject(environment)
      ? Object.entries(environment).map(([key, value]) => [key, value, ['environment', key]])
      : [];
  for (const [key, value, path] of variables) {
    // ${VAR} takes the value from the shell or .env at run time: not a literal.
    if (SECRET_NAME.test(key) && typeof value === 'string' && value !== '' && !/^\$\{?\w+/.test(value)) at(path, R.secretInEnv, `${key} is set to a literal value`);
  }

  const added = arrayOf(service.cap_add).map(String).filter((capability) => DANGEROUS_CAPABILITIES.has(capability.toUpperCase().replace(/^CAP_/, '')));
  if (added.length > 0) at(['cap_add'], R.addedCapabilities, `Adds ${added.join(', ')}`);
  const unconfined = arrayOf(service.security_opt).map(String).filter((option) => /^(?:seccomp|apparmor)[:=]unconfined$/i.test(option));
  if (unconfined.length > 0) at(['security_opt'], R.securityOptOut, unconfined.join(', '));

  if (typeof service.image === 'string' && service.build === undefined && !/\$\{/.test(service.image)) {
    const tag = imageTag(service.image);
    if (tag === undefined || tag === 'latest') at(['image'], R.latestImage, tag === undefined ? `Image ${service.image} has no tag` : `Image ${service.image} uses :latest`);
  }
  if (service.user !== undefined && /^(?:root|0)(?::.*)?$/.test(String(service.user))) at(['user'], R.rootUser, `user: ${String(service.user)}`);

  for (const [index, port] of arrayOf(service.ports).entries()) {
    if (publishedOnAllInterfaces(port)) at(['ports', index], R.allInterfaces, `Port ${typeof port === 'object' ? JSON.stringify(port) : String(port)} is published on 0.0.0.0`);
  }
}

/** The host path of a bind mount (short `host:container[:mode]` or long `type: bind` syntax); undefined for named volumes. */
function bindSource(volume: unknown): string | undefined {
  if (typeof volume === 'string') {
    const [source, target] = volume.split(':');
    return target !== undefined && /^[/~.]/.test(source) ? source : undefined;
  }
  return isObject(volume) && volume.type === 'bind' && typeof volume.source === 'string' ? volume.source : undefined;
}

/** `"8080:80"`, `"80"` or `{ published: 8080 }` without a host address publish on every interface. */
function publishedOnAllInterfaces(port: unknown): boolean {
  if (isObject(port)) return port.published !== undefined && (port.host_ip === undefined || port.host_ip === '0.0.0.0');
  const text = String(port);
  const parts = text.split(':');
  if (parts.length < 2) return false; // a container port alone is published on a random host port
  return parts.length === 2 || parts[0] === '0.0.0.0' || parts[0] === '';
}
