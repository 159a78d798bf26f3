import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { promisify } from 'node:util';
import * as ts from 'typescript';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');

/**
 * A client project as a user would make one: `openapi-typescript` turns the served document into
 * types, a TypeScript file calls the API through `openapi-fetch` with them. Lives under test/openapi
 * (removed afterwards) so the project's node_modules resolve.
 */
export class TypedClientProject {
  private constructor(readonly dir: string) {}

  static async generate(documentUrl: string): Promise<TypedClientProject> {
    const dir = await mkdtemp(path.join(__dirname, '.client-'));
    const project = new TypedClientProject(dir);
    try {
      // The package's exports do not list its CLI: it is run from its place, as `npx openapi-typescript` would.
      const cli = path.join(ROOT, 'node_modules/openapi-typescript/bin/cli.js');
      await run(process.execPath, [cli, documentUrl, '-o', path.join(dir, 'api.d.ts')], { cwd: ROOT });
      return project;
    } catch (err) {
      await project.remove();
      throw err;
    }
  }

  /** TypeScript's diagnostics of `source` compiled against the generated types, as text; empty = it type-checks. */
  async typeErrors(name: string, source: string): Promise<string[]> {
    const file = path.join(this.dir, `${name}.mts`);
    await writeFile(file, source);
    const program = ts.createProgram([file], {
      strict: true, noEmit: true, skipLibCheck: true, target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, types: ['node'],
    });
    return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  }

  /** Runs `source` (already type-checked) with Node as an ES module; resolves to what it printed. */
  async run(name: string, source: string, env: Record<string, string>): Promise<string> {
    const file = path.join(this.dir, `${name}.mjs`);
    await writeFile(file, ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText);
    const { stdout } = await run(process.execPath, [file], { cwd: this.dir, env: { ...process.env, ...env }, timeout: 30_000 });
    return stdout;
  }

  remove(): Promise<void> {
    return rm(this.dir, { recursive: true, force: true });
  }
}
