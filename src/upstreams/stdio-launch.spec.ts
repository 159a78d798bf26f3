import { hostname } from 'node:os';
import { AppException } from '../common/errors';
import { stdioLaunchOf, stdioProcessOf, stdioView } from './stdio-launch';

const parameterOf = (raw: Record<string, unknown>) => {
  try {
    stdioLaunchOf(raw);
  } catch (err) {
    return ((err as AppException).body.details as { parameter: string }).parameter;
  }
  return undefined;
};

describe('a stdio upstream’s launch', () => {
  it('runs a command with its arguments, folder and the secrets as its environment', () => {
    const spec = stdioLaunchOf({ command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything', 'stdio'], env_from_secrets: { API_TOKEN: 'token' }, cwd: '/srv/mcp' });
    expect(stdioProcessOf(spec, { API_TOKEN: 'v' })).toEqual({ command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything', 'stdio'], env: { API_TOKEN: 'v' }, cwd: '/srv/mcp' });
  });

  const settings = { dockerHost: 'unix:///run/tos-docker.sock', memory: '256m', cpus: '0.5', pids: 64, tmpfsMiB: 16, user: '65534:65534' };
  const container = { settings, upstreamId: 'up_abc' };

  it('runs an image confined: no network unless egress is allowed, no capabilities, read-only, capped, non-root, labelled; secrets by name only', () => {
    const closed = stdioLaunchOf({ image: 'mcp/filesystem:1.0', args: ['/data'], env_from_secrets: { TOKEN: 'token' } });
    const run = stdioProcessOf(closed, { TOKEN: 'secret-value' }, container);
    const name = run.container!.name;
    expect(name).toMatch(/^tos-stdio-up_abc-[0-9a-f]{8}$/);
    expect(run).toEqual({
      command: 'docker',
      args: [
        'run', '-i', '--rm', '--pull', 'never', '--init', '--name', name,
        '--label', 'tos.stdio.upstream=up_abc', '--label', expect.stringMatching(new RegExp(`^tos\\.stdio\\.owner=${hostname()}/${process.pid}/\\d{13}$`)),
        '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges', '--read-only', '--tmpfs', '/tmp:rw,noexec,nosuid,nodev,size=16m',
        '--pids-limit', '64', '--memory', '256m', '--memory-swap', '256m', '--cpus', '0.5', '--user', '65534:65534',
        '--network', 'none', '-e', 'TOKEN', 'mcp/filesystem:1.0', '/data',
      ],
      env: { TOKEN: 'secret-value', DOCKER_HOST: 'unix:///run/tos-docker.sock' },
      container: { name, dockerHost: 'unix:///run/tos-docker.sock' },
    });
    expect(run.args.join(' ')).not.toContain('secret-value');
    const open = stdioProcessOf(stdioLaunchOf({ image: 'mcp/fetch', allow_egress: true, user: 'root' }), {}, container);
    expect(open.args).not.toContain('--network');
    expect(open.args.slice(open.args.indexOf('--user'), open.args.indexOf('--user') + 2)).toEqual(['--user', 'root']);
    expect(stdioProcessOf(stdioLaunchOf({ image: 'mcp/fetch' }), {}, { settings: { ...settings, user: '' }, upstreamId: 'up_abc' }).args).not.toContain('--user');
    // Each start its own name: a restart never collides with a container still being removed.
    expect(stdioProcessOf(closed, {}, container).container!.name).not.toBe(name);
  });

  it('does not run an image while the container form is off', () => {
    expect(() => stdioProcessOf(stdioLaunchOf({ image: 'mcp/fetch' }), {})).toThrow(/UPSTREAMS_STDIO_DOCKER_HOST/);
  });

  it('shows the command line and the secrets’ names, never values', () => {
    expect(stdioView(stdioLaunchOf({ image: 'mcp/fetch', env_from_secrets: { T: 'tok' } }))).toEqual({ image: 'mcp/fetch', args: [], env_from_secrets: { T: 'tok' }, allow_egress: false });
  });

  it.each([
    [{}, 'command'],
    [{ command: 'node', image: 'x' }, 'image'],
    [{ command: '  ' }, 'command'],
    [{ command: 'node', cwd: 'rel' }, 'cwd'],
    [{ command: 'node', allow_egress: true }, 'allow_egress'],
    [{ image: '-v/:/host' }, 'image'],
    [{ image: 'x', cwd: '/tmp' }, 'cwd'],
    [{ image: 'x', allow_egress: 'yes' }, 'allow_egress'],
    [{ command: 'node', args: [1] }, 'args'],
    [{ command: 'node', args: Array(65).fill('a') }, 'args'],
    [{ command: 'node', env_from_secrets: ['A'] }, 'env_from_secrets'],
    [{ command: 'node', env_from_secrets: { A: 'bad name!' } }, 'env_from_secrets.A'],
    [{ image: 'x', env_from_secrets: { DOCKER_HOST: 'engine' } }, 'env_from_secrets.DOCKER_HOST'],
    [{ image: 'x', user: '-u0' }, 'user'],
    [{ image: 'x', user: 'a:b:c' }, 'user'],
    [{ command: 'node', user: 'root' }, 'user'],
  ])('refuses %j naming %s', (raw, parameter) => {
    expect(parameterOf(raw)).toBe(parameter);
  });
});
