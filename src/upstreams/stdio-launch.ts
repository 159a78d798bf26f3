import { isAbsolute } from 'node:path';
import { AppException } from '../common/errors';
import { SECRET_NAME } from '../secrets/secret-name';
import type { StdioLaunchSpec } from './upstream.entity';
import { confinementArgs, containerName, dockerEnv, type ContainerSettings } from './stdio-container';

/** An environment variable's name as POSIX shells accept it. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** A container image reference: registry/name:tag@digest characters, no option-looking leading dash. */
const IMAGE = /^[A-Za-z0-9][A-Za-z0-9._\-/:@]{0,254}$/;
const MAX_ARGS = 64;
const MAX_ARG_LENGTH = 4096;
/** `--user`'s forms: a name or uid, optionally `:group` (no option-looking leading dash). */
const CONTAINER_USER = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,31})?$/;
/** The docker CLI reads these from its environment, where a container's secrets are put: a secret must not steer it. */
const DOCKER_CLI_VARIABLE = /^DOCKER_/i;

/** What the supervisor spawns: the command, its arguments, the environment it adds to the SDK's minimal one, its folder. */
export interface StdioProcess {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  /** The container form: the container's name and engine, so a stop can make sure it is gone. */
  container?: { name: string; dockerHost: string };
}

function argsOf(raw: unknown): string[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || raw.length > MAX_ARGS || !raw.every((arg) => typeof arg === 'string' && arg.length <= MAX_ARG_LENGTH && !arg.includes('\0'))) {
    throw AppException.invalidRequest(`args must be a list of at most ${MAX_ARGS} strings`, { parameter: 'args' });
  }
  return raw as string[];
}

function envFromSecretsOf(raw: unknown): Record<string, string> {
  if (raw === undefined) return {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw AppException.invalidRequest('env_from_secrets must map environment variable names to secret names', { parameter: 'env_from_secrets' });
  for (const [name, secret] of Object.entries(raw)) {
    if (!ENV_NAME.test(name)) throw AppException.invalidRequest(`env_from_secrets: '${name}' is not an environment variable name`, { parameter: `env_from_secrets.${name}` });
    if (typeof secret !== 'string' || !SECRET_NAME.test(secret)) throw AppException.invalidRequest(`env_from_secrets.${name} must name a secret`, { parameter: `env_from_secrets.${name}` });
  }
  return raw as Record<string, string>;
}

/** The operator's `{ command, args, env_from_secrets, cwd }` or `{ image, args, env_from_secrets, allow_egress, user }`, checked; else the 400 naming what is wrong. */
export function stdioLaunchOf(raw: Record<string, unknown>): StdioLaunchSpec {
  const env_from_secrets = envFromSecretsOf(raw.env_from_secrets);
  const args = argsOf(raw.args);
  if ((raw.command === undefined) === (raw.image === undefined)) throw AppException.invalidRequest('give exactly one of command and image', { parameter: raw.command === undefined ? 'command' : 'image' });
  if (raw.image !== undefined) {
    if (typeof raw.image !== 'string' || !IMAGE.test(raw.image)) throw AppException.invalidRequest('image must be a container image reference (name[:tag][@digest])', { parameter: 'image' });
    if (raw.cwd !== undefined) throw AppException.invalidRequest('cwd is for a command; an image runs in its own working directory', { parameter: 'cwd' });
    if (raw.allow_egress !== undefined && typeof raw.allow_egress !== 'boolean') throw AppException.invalidRequest('allow_egress must be true or false', { parameter: 'allow_egress' });
    if (raw.user !== undefined && (typeof raw.user !== 'string' || !CONTAINER_USER.test(raw.user))) throw AppException.invalidRequest('user must be a user name or uid, optionally with :group', { parameter: 'user' });
    const steering = Object.keys(env_from_secrets).find((name) => DOCKER_CLI_VARIABLE.test(name));
    if (steering) throw AppException.invalidRequest(`env_from_secrets: '${steering}' would configure the docker CLI itself`, { parameter: `env_from_secrets.${steering}` });
    return { image: raw.image, args, env_from_secrets, allow_egress: raw.allow_egress === true, ...(raw.user !== undefined && { user: raw.user as string }) };
  }
  if (raw.user !== undefined) throw AppException.invalidRequest('user is for an image: a command runs as the service\'s user', { parameter: 'user' });
  if (typeof raw.command !== 'string' || raw.command.trim() === '' || raw.command.length > 1024 || raw.command.includes('\0')) throw AppException.invalidRequest('command must be a program name or path', { parameter: 'command' });
  if (raw.allow_egress !== undefined) throw AppException.invalidRequest('allow_egress is for an image: a command reaches whatever the service user can', { parameter: 'allow_egress' });
  if (raw.cwd !== undefined && (typeof raw.cwd !== 'string' || !isAbsolute(raw.cwd))) throw AppException.invalidRequest('cwd must be an absolute path', { parameter: 'cwd' });
  return { command: raw.command, args, env_from_secrets, ...(raw.cwd !== undefined && { cwd: raw.cwd as string }) };
}

/** Where and how images run; absent when the container form is off (no UPSTREAMS_STDIO_DOCKER_HOST). */
export interface ContainerRun {
  settings: ContainerSettings;
  upstreamId: string;
}

/**
 * The process to spawn, with the secrets' values in its environment. An image runs as
 * `docker run -i --rm` under the confinement of stdio-container.ts, each secret passed by name
 * (`-e NAME`, value in docker's own environment) so no value is on a command line.
 */
export function stdioProcessOf(spec: StdioLaunchSpec, secrets: Record<string, string>, container?: ContainerRun): StdioProcess {
  if ('command' in spec) return { command: spec.command, args: spec.args, env: secrets, ...(spec.cwd && { cwd: spec.cwd }) };
  if (!container) throw new Error('the container form is off (UPSTREAMS_STDIO_DOCKER_HOST)');
  const name = containerName(container.upstreamId);
  const confined = confinementArgs(container.settings, { name, upstreamId: container.upstreamId, user: spec.user, allowEgress: spec.allow_egress });
  const passed = Object.keys(secrets).flatMap((variable) => ['-e', variable]);
  return {
    command: 'docker',
    // Never pulled at start: the image on the engine is the one the operator put there (docs/upstreams.md#the-container-form).
    args: ['run', '-i', '--rm', '--pull', 'never', ...confined, ...passed, spec.image, ...spec.args],
    env: { ...secrets, ...dockerEnv(container.settings.dockerHost) },
    container: { name, dockerHost: container.settings.dockerHost },
  };
}

/** How the launch reads in the API and the log: the command line, never a secret (those are named only). */
export function stdioView(spec: StdioLaunchSpec): Record<string, unknown> {
  return 'command' in spec
    ? { command: spec.command, args: spec.args, env_from_secrets: spec.env_from_secrets, ...(spec.cwd && { cwd: spec.cwd }) }
    : { image: spec.image, args: spec.args, env_from_secrets: spec.env_from_secrets, allow_egress: spec.allow_egress, ...(spec.user !== undefined && { user: spec.user }) };
}
