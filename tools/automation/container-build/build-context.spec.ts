import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { extract } from 'tar-stream';
import { defineTool, Tool, type ToolContext, type ToolHandler, type ToolInput, type ToolOutput } from '@tos/sdk';
import { runTool, toolFailure } from '@tos/sdk/testing';
import { buildContext } from './build-context';

/** A test-only tool that packs a build context, so the context is read through a real workspace and no engine is needed. */
const definition = defineTool({
  id: 'build-context-probe',
  name: 'Build Context Probe',
  category: 'automation',
  description: 'Packs a build context as container-build sends it (test only).',
  version: '1.0.0',
  input: { type: 'object', properties: { context: { type: 'string', maxLength: 1024, description: 'The context folder.' } }, required: ['context'] },
  output: {
    type: 'object',
    properties: {
      files: { type: 'integer', description: 'Files in the context.' },
      entries: {
        type: 'array',
        description: 'The tar entries, as packed.',
        items: { type: 'object', properties: { name: { type: 'string' }, type: { type: 'string' }, linkname: { type: ['string', 'null'] }, body: { type: 'string' } } },
      },
    },
    required: ['files', 'entries'],
  },
  // Definitions need one; this one is never run (the probe is not registered).
  examples: [{ name: 'An empty context', input: { context: 'app' }, output: { files: 0, entries: [] } }],
});

@Tool(definition)
class BuildContextProbe implements ToolHandler<typeof definition> {
  async execute(input: ToolInput<typeof definition>, ctx: ToolContext<typeof definition>): Promise<ToolOutput<typeof definition>> {
    const context = await buildContext(ctx, input.context, 'Dockerfile');
    const entries: Array<{ name: string; type: string; linkname: string | null; body: string }> = [];
    const reading = extract();
    reading.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk) => chunks.push(chunk as Buffer));
      stream.on('end', () => {
        entries.push({ name: header.name, type: header.type, linkname: header.linkname || null, body: Buffer.concat(chunks).toString('utf8') });
        next();
      });
    });
    await new Promise<void>((resolve, reject) => {
      reading.on('finish', resolve).on('error', reject);
      context.tar.on('error', reject).pipe(reading as unknown as NodeJS.WritableStream);
    });
    return { files: context.files, entries };
  }
}

describe('the container-build context', () => {
  let base: string;
  let workspace: string;
  beforeEach(() => {
    base = mkdtempSync(path.join(tmpdir(), 'build-context-'));
    workspace = path.join(base, 'workspace');
    mkdirSync(workspace);
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  function tree(files: Record<string, string>): void {
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(workspace, file)), { recursive: true });
      writeFileSync(path.join(workspace, file), text);
    }
  }
  const pack = (context: string) => runTool<{ files: number; entries: Array<{ name: string; type: string; linkname: string | null; body: string }> }>(BuildContextProbe, { context }, { workspaceRoot: workspace });
  const names = async (context: string) => (await pack(context)).entries.map((entry) => entry.name).sort();

  it('sends node_modules and .git when no .dockerignore names them, as docker build does', async () => {
    tree({ 'app/Dockerfile': 'FROM scratch\nCOPY . /\n', 'app/index.js': 'x', 'app/node_modules/dep/index.js': 'dep', 'app/.git/HEAD': 'ref: refs/heads/main\n', 'app/src/.git/config': '[core]\n' });
    expect(await names('app')).toEqual(['.git/HEAD', 'Dockerfile', 'index.js', 'node_modules/dep/index.js', 'src/.git/config']);
  });

  it('leaves out what .dockerignore names, exceptions honoured, and always sends the Dockerfile and .dockerignore', async () => {
    tree({
      'app/Dockerfile': 'FROM scratch\n',
      'app/.dockerignore': '.git\nnode_modules\n!node_modules/keep\n*.log\nDockerfile\n.dockerignore\n',
      'app/index.js': 'x',
      'app/debug.log': 'noise',
      'app/.git/HEAD': 'ref',
      'app/node_modules/keep/index.js': 'kept',
      'app/node_modules/drop/index.js': 'dropped',
    });
    expect(await names('app')).toEqual(['.dockerignore', 'Dockerfile', 'index.js', 'node_modules/keep/index.js']);
  });

  it('sends a symlink as a link, never read through, and nothing for a link out of the workspace', async () => {
    writeFileSync(path.join(base, 'secret.txt'), 'outside secret');
    tree({ 'app/Dockerfile': 'FROM scratch\n', 'app/node_modules/dep/cli.js': 'cli', 'app/empty.txt': '' });
    mkdirSync(path.join(workspace, 'app/node_modules/.bin'));
    symlinkSync('../dep/cli.js', path.join(workspace, 'app/node_modules/.bin/dep'));
    symlinkSync(path.join(base, 'secret.txt'), path.join(workspace, 'app/leak.txt'));
    symlinkSync(base, path.join(workspace, 'app/leakdir'));
    const { entries, files } = await pack('app');
    expect(entries.map(({ name, type, linkname, body }) => [name, type, linkname, body]).sort()).toEqual([
      ['Dockerfile', 'file', null, 'FROM scratch\n'],
      ['empty.txt', 'file', null, ''],
      ['node_modules/.bin/dep', 'symlink', '../dep/cli.js', ''],
      ['node_modules/dep/cli.js', 'file', null, 'cli'],
    ]);
    expect(files).toBe(4);
    expect(JSON.stringify(entries)).not.toContain('outside secret');
  });

  it('a chain of links that ends outside sends no link out and no byte of what is there', async () => {
    writeFileSync(path.join(base, 'secret.txt'), 'outside secret');
    tree({ 'app/Dockerfile': 'FROM scratch\n' });
    // hop1 → hop2 → ../../secret.txt (outside); dir1 → dir2 → ../.. (the folder above the workspace)
    symlinkSync('hop2', path.join(workspace, 'app/hop1'));
    symlinkSync('../../secret.txt', path.join(workspace, 'app/hop2'));
    symlinkSync('dir2', path.join(workspace, 'app/dir1'));
    symlinkSync('../..', path.join(workspace, 'app/dir2'));
    // The context itself named through a link inside the workspace.
    symlinkSync('app', path.join(workspace, 'via'));
    for (const context of ['app', 'via']) {
      const { entries } = await pack(context);
      expect(JSON.stringify(entries)).not.toContain('outside secret');
      // What is sent as a link resolves inside the context, or not at all: never to the secret or above.
      for (const entry of entries.filter((e) => e.type === 'symlink')) {
        const target = path.resolve(path.join(workspace, 'app', path.dirname(entry.name)), entry.linkname!);
        expect({ entry: entry.name, inside: target.startsWith(path.join(workspace, 'app') + path.sep) }).toEqual({ entry: entry.name, inside: true });
      }
      expect(entries.map((e) => e.name)).not.toContain('hop2');
      expect(entries.map((e) => e.name)).not.toContain('dir2');
    }
  });

  it('keeps the file bound, counting only what .dockerignore lets through', async () => {
    tree({ 'app/Dockerfile': 'FROM scratch\n', 'app/.dockerignore': 'node_modules\n' });
    const many = path.join(workspace, 'app/node_modules/many');
    mkdirSync(many, { recursive: true });
    for (let index = 0; index <= 20_000; index++) writeFileSync(path.join(many, `${index}.js`), '');
    expect((await pack('app')).files).toBe(2);
    rmSync(path.join(workspace, 'app/.dockerignore'));
    expect(await toolFailure(pack('app'))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'context' } });
  }, 60_000);
});
