import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { buildCodeWorkspace, directoryWorkspace } from '../../../test/support/code-tools/workspace';
import { dependencyPaths, readLockfile, type Lockfile } from '.';

let root: string;
beforeAll(() => (root = buildCodeWorkspace(mkdtempSync(path.join(tmpdir(), 'lockfiles-')))));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const read = (file: string) => readLockfile(directoryWorkspace(root), file);
const write = (file: string, text: string) => writeFileSync(path.join(root, file), text);
/** key: direct/dev flags and dependencies, compactly. */
const graph = (lockfile: Lockfile) =>
  Object.fromEntries(lockfile.packages.map((entry) => [entry.key, `${entry.direct ? 'direct' : 'transitive'}${entry.dev ? ' dev' : ''} -> ${entry.dependencies.join(',')}`]));

describe('lockfile parsers', () => {
  it('resolves package-lock v3 dependencies the way Node does and keeps licences and integrity', async () => {
    const lockfile = await read('code/npm-app/package-lock.json');
    expect(lockfile.project).toEqual({ name: 'shop-api', version: '1.0.0' });
    expect(graph(lockfile)).toEqual({
      'body-parser@1.19.0': 'transitive -> debug@2.6.9,qs@6.7.0',
      'debug@2.6.9': 'transitive -> ms@2.0.0',
      'express@4.17.1': 'direct -> body-parser@1.19.0,debug@2.6.9,qs@6.7.0',
      'lodash@4.17.20': 'direct -> ',
      'minimist@1.2.5': 'direct dev -> ',
      'ms@2.0.0': 'transitive -> ',
      'qs@6.7.0': 'transitive -> ',
    });
    expect(lockfile.packages.find((entry) => entry.name === 'qs')).toMatchObject({ license: 'BSD-3-Clause', integrity: expect.stringMatching(/^sha512-/) });
    expect(dependencyPaths(lockfile).get('ms@2.0.0')).toEqual(['express@4.17.1', 'debug@2.6.9', 'ms@2.0.0']);
  });

  it('reads a nested package-lock v1 tree, preferring the closest install', async () => {
    mkdirSync(path.join(root, 'legacy'));
    write('legacy/npm-shrinkwrap.json', JSON.stringify({
      name: 'legacy',
      lockfileVersion: 1,
      dependencies: {
        a: { version: '1.0.0', requires: { b: '^2.0.0' }, dependencies: { b: { version: '2.0.0' } } },
        b: { version: '1.0.0', dev: true },
      },
    }));
    // No package.json beside it: the roots are the top-level installs nothing resolves to (b@1.0.0 too, as a's b is its own).
    expect(graph(await read('legacy/npm-shrinkwrap.json'))).toEqual({ 'a@1.0.0': 'direct -> b@2.0.0', 'b@1.0.0': 'direct dev -> ', 'b@2.0.0': 'transitive -> ' });
  });

  it('reads a classic yarn.lock without a manifest, taking what nothing requires as the roots', async () => {
    mkdirSync(path.join(root, 'bare'));
    write('bare/yarn.lock', '# yarn lockfile v1\n\n"a@^1.0.0", "a@^1.1.0":\n  version "1.2.0"\n  dependencies:\n    b "~2.0.0"\n\nb@~2.0.0:\n  version "2.0.1"\n');
    expect(graph(await read('bare/yarn.lock'))).toEqual({ 'a@1.2.0': 'direct -> b@2.0.1', 'b@2.0.1': 'transitive -> ' });
  });

  it('reads yarn berry workspaces as roots and takes dev from the manifest', async () => {
    expect(graph(await read('code/yarn-berry/yarn.lock'))).toEqual({
      'debug@4.3.1': 'direct dev -> ms@2.1.2',
      'ms@2.1.2': 'transitive dev -> ',
      'qs@6.10.1': 'direct -> side-channel@1.0.4',
      'side-channel@1.0.4': 'transitive -> ',
    });
  });

  it('reads pnpm lockfiles of versions 5, 6 and 9', async () => {
    expect(graph(await read('code/pnpm-app/pnpm-lock.yaml'))).toEqual({
      'body-parser@1.19.0': 'transitive -> qs@6.7.0',
      'express@4.17.1': 'direct -> body-parser@1.19.0,qs@6.7.0',
      'minimist@1.2.5': 'direct dev -> ',
      'qs@6.7.0': 'transitive -> ',
    });
    const v6 = [
      "lockfileVersion: '6.0'",
      'dependencies:',
      '  react-dom:',
      '    specifier: ^18.2.0',
      '    version: 18.2.0(react@18.2.0)',
      'packages:',
      '  /react-dom@18.2.0(react@18.2.0):',
      '    resolution: {integrity: sha512-AAAA}',
      '    dependencies:',
      '      react: 18.2.0',
      '    dev: false',
      '  /react@18.2.0:',
      '    resolution: {integrity: sha512-BBBB}',
      '    dev: false',
    ].join('\n');
    const v5 = [
      'lockfileVersion: 5.4',
      'specifiers:',
      '  "@types/node": ^18.0.0',
      'devDependencies:',
      '  "@types/node": 18.11.9',
      'packages:',
      '  /@types/node/18.11.9:',
      '    resolution: {integrity: sha512-CCCC}',
      '    dev: true',
    ].join('\n');
    for (const [name, text, expected] of [
      ['v6', v6, { 'react-dom@18.2.0': 'direct -> react@18.2.0', 'react@18.2.0': 'transitive -> ' }],
      ['v5', v5, { '@types/node@18.11.9': 'direct dev -> ' }],
    ] as const) {
      const dir = path.join(root, 'pnpm', name);
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, 'pnpm-lock.yaml'), text);
      expect(graph(await read(`pnpm/${name}/pnpm-lock.yaml`))).toEqual(expected);
    }
  });

  it('keeps only exact pins of requirements.txt, normalising names', async () => {
    const lockfile = await read('code/python-app/requirements.txt');
    expect(lockfile.packages.map((entry) => entry.key)).toEqual(['django@3.2.0', 'jinja2@2.11.2', 'pyyaml@5.4', 'urllib3@2.0.0rc1']);
    expect(lockfile.skipped.map((entry) => entry.entry)).toEqual(['requests>=2.25', '-e ./vendor/local-lib']);
  });

  it('keeps go.sum modules whose code is built and tells direct ones by go.mod', async () => {
    expect(graph(await read('code/go-app/go.sum'))).toEqual({
      'github.com/gin-gonic/gin@v1.9.1': 'direct -> ',
      'golang.org/x/net@v0.0.0-20210226172049-e18ecbb05110': 'transitive -> ',
      'golang.org/x/text@v0.3.5': 'direct -> ',
    });
  });
});
