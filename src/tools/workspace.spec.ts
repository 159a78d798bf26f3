import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { textSource, ToolError, type Workspace } from './sdk';
import { createWorkspace } from './workspace';

/** Expects an INVALID_INPUT ToolError naming `parameter`, with a message matching `message`. */
async function expectInvalid(promise: Promise<unknown>, parameter: string, message: RegExp): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ToolError);
  expect((error as ToolError).code).toBe('INVALID_INPUT');
  expect((error as ToolError).details?.parameter).toBe(parameter);
  expect((error as ToolError).message).toMatch(message);
}

describe('createWorkspace', () => {
  let base: string;
  let root: string;
  let outside: string;
  let ws: Workspace;

  beforeEach(() => {
    base = mkdtempSync(path.join(tmpdir(), 'workspace-spec-'));
    root = path.join(base, 'root');
    outside = path.join(base, 'outside');
    mkdirSync(path.join(root, 'src', 'nested'), { recursive: true });
    mkdirSync(path.join(root, '.git'));
    mkdirSync(path.join(root, 'node_modules', 'dep'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(path.join(root, 'README.md'), 'hello\n');
    writeFileSync(path.join(root, 'src', 'b.ts'), 'b');
    writeFileSync(path.join(root, 'src', 'a.ts'), 'aaaa');
    writeFileSync(path.join(root, 'src', 'nested', 'c.ts'), 'c'.repeat(100));
    writeFileSync(path.join(root, '.git', 'config'), 'git');
    writeFileSync(path.join(root, 'node_modules', 'dep', 'index.js'), 'dep');
    writeFileSync(path.join(outside, 'secret.txt'), 'outside secret');
    ws = createWorkspace(root);
  });

  afterEach(() => rmSync(base, { recursive: true, force: true }));

  describe('resolve', () => {
    it('returns the real absolute path of a file inside the root', async () => {
      await expect(ws.resolve('src/a.ts')).resolves.toBe(path.join(root, 'src', 'a.ts'));
      await expect(ws.resolve('src/nested/../a.ts')).resolves.toBe(path.join(root, 'src', 'a.ts'));
      await expect(ws.resolve('.')).resolves.toBe(root);
    });

    it('refuses absolute paths', async () => {
      await expectInvalid(ws.resolve(path.join(root, 'README.md')), 'path', /absolute paths are not allowed/);
      await expectInvalid(ws.resolve('C:\\Windows\\win.ini', 'file'), 'file', /absolute/);
    });

    it('refuses .. escapes', async () => {
      await expectInvalid(ws.resolve('../outside/secret.txt'), 'path', /escapes the workspace/);
      await expectInvalid(ws.resolve('src/../../outside'), 'path', /escapes the workspace/);
    });

    it('refuses NUL bytes', async () => {
      await expectInvalid(ws.resolve('README.md\0.png'), 'path', /NUL byte/);
    });

    it('refuses symlinks that point out of the root, to files and to directories', async () => {
      symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'leak.txt'));
      symlinkSync(outside, path.join(root, 'leakdir'));
      await expectInvalid(ws.resolve('leak.txt'), 'path', /symbolic link points out of the workspace/);
      await expectInvalid(ws.resolve('leakdir/secret.txt', 'target'), 'target', /out of the workspace/);
    });

    it('refuses a chain of symlinks that ends out of the root, whichever hop leaves', async () => {
      // hop1 → hop2 (inside) → the secret (outside); dir1 → dir2 (inside) → the outside folder
      symlinkSync('hop2', path.join(root, 'hop1'));
      symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'hop2'));
      symlinkSync('dir2', path.join(root, 'dir1'));
      symlinkSync(path.relative(root, outside), path.join(root, 'dir2'));
      await expectInvalid(ws.resolve('hop1'), 'path', /out of the workspace/);
      await expectInvalid(ws.resolve('dir1/secret.txt'), 'path', /out of the workspace/);
      await expectInvalid(ws.readText('hop1', 1_000), 'path', /out of the workspace/);
      await expectInvalid(ws.listFiles('dir1'), 'path', /out of the workspace/);
      const listed = (await ws.listFiles('.')).map((f) => f.path);
      expect(listed.filter((p) => /hop|dir[12]|secret/.test(p))).toEqual([]);
    });

    it('accepts symlinks that stay inside the root', async () => {
      symlinkSync(path.join(root, 'src', 'a.ts'), path.join(root, 'alias.ts'));
      await expect(ws.resolve('alias.ts')).resolves.toBe(path.join(root, 'src', 'a.ts'));
    });

    it('works when the root itself is reached through a symlink', async () => {
      const linkedRoot = path.join(base, 'linked-root');
      symlinkSync(root, linkedRoot);
      await expect(createWorkspace(linkedRoot).resolve('src/a.ts')).resolves.toBe(path.join(root, 'src', 'a.ts'));
    });

    it('reports missing paths clearly', async () => {
      await expectInvalid(ws.resolve('nope.txt'), 'path', /^No such file or directory in the workspace: nope.txt$/);
      await expectInvalid(ws.resolve('README.md/child'), 'path', /No such file or directory/);
    });

    it('fails with a TOOL_ERROR when the root does not exist', async () => {
      const error = await createWorkspace(path.join(base, 'missing')).resolve('x').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ToolError);
      expect((error as ToolError).code).toBe('TOOL_ERROR');
    });
  });

  describe('readText', () => {
    it('reads a text file', async () => {
      await expect(ws.readText('README.md', 100)).resolves.toBe('hello\n');
    });

    it('refuses files over maxBytes and names the limit', async () => {
      await expectInvalid(ws.readText('src/nested/c.ts', 99, 'log'), 'log', /100 bytes, over the limit of 99 bytes/);
      await expect(ws.readText('src/nested/c.ts', 100)).resolves.toHaveLength(100);
    });

    it('refuses directories and special files', async () => {
      await expectInvalid(ws.readText('src', 1000), 'path', /Not a regular file/);
      execFileSync('mkfifo', [path.join(root, 'pipe')]);
      await expectInvalid(ws.readText('pipe', 1000), 'path', /Not a regular file/);
    });

    it('applies the sandbox rules', async () => {
      symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'leak.txt'));
      await expectInvalid(ws.readText('leak.txt', 1000), 'path', /out of the workspace/);
      await expectInvalid(ws.readText('../outside/secret.txt', 1000), 'path', /escapes/);
    });
  });

  describe('listFiles', () => {
    it('walks recursively in sorted order, skipping .git and node_modules', async () => {
      await expect(ws.listFiles('.')).resolves.toEqual([
        { path: 'README.md', size: 6 },
        { path: 'src/a.ts', size: 4 },
        { path: 'src/b.ts', size: 1 },
        { path: 'src/nested/c.ts', size: 100 },
      ]);
    });

    it('walks .git and node_modules too when `exclude` decides, pruning the directories it excludes before counting', async () => {
      await expect(ws.listFiles('.', { exclude: () => false })).resolves.toEqual([
        { path: '.git/config', size: 3 },
        { path: 'README.md', size: 6 },
        { path: 'node_modules/dep/index.js', size: 3 },
        { path: 'src/a.ts', size: 4 },
        { path: 'src/b.ts', size: 1 },
        { path: 'src/nested/c.ts', size: 100 },
      ]);
      const asked: string[] = [];
      const exclude = (file: string, kind: 'file' | 'directory') => {
        asked.push(`${kind} ${file}`);
        return file === 'src/nested' || file.endsWith('.md');
      };
      const files = await ws.listFiles('.', { exclude, maxFiles: 4 });
      expect(files.map((f) => f.path)).toEqual(['.git/config', 'node_modules/dep/index.js', 'src/a.ts', 'src/b.ts']);
      expect(asked).toContain('directory src/nested');
      expect(asked).not.toContain('file src/nested/c.ts');
    });

    it('lists a single file, and a subdirectory with root-relative paths', async () => {
      await expect(ws.listFiles('README.md')).resolves.toEqual([{ path: 'README.md', size: 6 }]);
      await expect(ws.listFiles('src/nested')).resolves.toEqual([{ path: 'src/nested/c.ts', size: 100 }]);
    });

    it('keeps symlinked files inside the root but skips links out of it and symlinked directories', async () => {
      symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'src', 'leak.txt'));
      symlinkSync(outside, path.join(root, 'src', 'leakdir'));
      symlinkSync(path.join(root, 'src'), path.join(root, 'src', 'loop'));
      symlinkSync(path.join(root, 'README.md'), path.join(root, 'src', 'readme-link.md'));
      symlinkSync(path.join(root, 'gone'), path.join(root, 'src', 'dangling'));
      const paths = (await ws.listFiles('src')).map((f) => f.path);
      expect(paths).toEqual(['src/a.ts', 'src/b.ts', 'src/nested/c.ts', 'src/readme-link.md']);
    });

    it('refuses a listed directory reached through a symlink out of the root', async () => {
      symlinkSync(outside, path.join(root, 'leakdir'));
      await expectInvalid(ws.listFiles('leakdir'), 'path', /out of the workspace/);
    });

    it('restricts the listing to `files`, relative to the listed directory', async () => {
      const files = await ws.listFiles('src', { files: ['nested', 'b.ts', 'b.ts'] });
      expect(files).toEqual([
        { path: 'src/b.ts', size: 1 },
        { path: 'src/nested/c.ts', size: 100 },
      ]);
    });

    it('refuses `files` entries that are missing, absolute, escaping or symlinked out', async () => {
      symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'src', 'leak.txt'));
      await expectInvalid(ws.listFiles('src', { files: ['missing.ts'] }), 'files', /No such file or directory in the workspace: src\/missing.ts/);
      await expectInvalid(ws.listFiles('src', { files: ['/etc/passwd'] }), 'files', /absolute/);
      await expectInvalid(ws.listFiles('src', { files: ['../README.md'] }), 'files', /escapes the listed directory/);
      await expectInvalid(ws.listFiles('src', { files: ['leak.txt'] }), 'files', /out of the workspace/);
      await expectInvalid(ws.listFiles('README.md', { files: ['x'] }), 'files', /directory/);
    });

    it('fails when more than maxFiles files would be returned', async () => {
      await expect(ws.listFiles('.', { maxFiles: 4 })).resolves.toHaveLength(4);
      await expectInvalid(ws.listFiles('.', { maxFiles: 3 }), 'path', /More than 3 files/);
    });

    it('skips files larger than maxFileBytes, before counting them against maxFiles', async () => {
      const files = await ws.listFiles('.', { maxFileBytes: 5, maxFiles: 3 });
      expect(files.map((f) => f.path)).toEqual(['src/a.ts', 'src/b.ts']);
    });

    it('applies the sandbox rules to the listed path', async () => {
      await expectInvalid(ws.listFiles('../outside'), 'path', /escapes/);
      await expectInvalid(ws.listFiles('/tmp', {}, 'dir'), 'dir', /absolute/);
    });
  });
});

describe('textSource', () => {
  it('returns the one source given', () => {
    expect(textSource({ content: '' })).toEqual({ kind: 'content', content: '' });
    expect(textSource({ path: 'a.log' })).toEqual({ kind: 'path', path: 'a.log' });
  });
});
