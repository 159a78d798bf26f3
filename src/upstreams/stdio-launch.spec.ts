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

  it('runs an image on the Docker engine without a network unless egress is allowed, secrets passed by name only', () => {
    const closed = stdioLaunchOf({ image: 'mcp/filesystem:1.0', args: ['/data'], env_from_secrets: { TOKEN: 'token' } });
    const run = stdioProcessOf(closed, { TOKEN: 'secret-value' });
    expect(run).toEqual({ command: 'docker', args: ['run', '-i', '--rm', '--network', 'none', '-e', 'TOKEN', 'mcp/filesystem:1.0', '/data'], env: { TOKEN: 'secret-value' } });
    expect(run.args.join(' ')).not.toContain('secret-value');
    const open = stdioProcessOf(stdioLaunchOf({ image: 'mcp/fetch', allow_egress: true }), {});
    expect(open.args).toEqual(['run', '-i', '--rm', 'mcp/fetch']);
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
  ])('refuses %j naming %s', (raw, parameter) => {
    expect(parameterOf(raw)).toBe(parameter);
  });
});
