import { Injectable } from '@nestjs/common';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

export interface ConsoleAsset {
  type: string;
  body: Buffer;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.png': 'image/png',
};

/** Packages the console imports by name, served as /console/assets/vendor-<name>.js (their ES module builds). */
const VENDOR: Record<string, string> = { marked: 'marked' };

/** The front end's folder (`console/` at the package root), from src/console or dist/src/console alike. */
function frontEndFolder(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'console');
    if (existsSync(path.join(candidate, 'index.html'))) return candidate;
  }
  throw new Error(`The console's front end (console/index.html) is not in any folder above ${__dirname}`);
}

/**
 * The console's files: its TypeScript compiled to ES modules with the project's own compiler
 * (transpile only; `npm run lint:types` type-checks it), the page and its style sheet. Built once,
 * on the first console request, so services nobody opens a console on never load the compiler.
 */
@Injectable()
export class ConsoleAssets {
  private built?: Promise<Map<string, ConsoleAsset>>;

  async get(name: string): Promise<ConsoleAsset | undefined> {
    this.built ??= this.build();
    return (await this.built).get(name);
  }

  private async build(): Promise<Map<string, ConsoleAsset>> {
    const ts = await import('typescript');
    const folder = frontEndFolder();
    const assets = new Map<string, ConsoleAsset>();
    for (const file of readdirSync(folder)) {
      const extension = path.extname(file);
      const source = readFileSync(path.join(folder, file));
      if (extension === '.ts') {
        const { outputText } = ts.transpileModule(source.toString('utf8'), {
          fileName: file,
          compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ES2022, removeComments: true },
        });
        // The browser resolves no bare specifier: a vendor import points at the copy served here.
        const linked = outputText.replace(/from '([^'./][^']*)'/g, (whole, name: string) => (VENDOR[name] ? `from './vendor-${name}.js'` : whole));
        assets.set(file.replace(/\.ts$/, '.js'), { type: TYPES['.js'], body: Buffer.from(linked) });
      } else if (TYPES[extension]) {
        assets.set(file, { type: TYPES[extension], body: source });
      }
    }
    for (const [name, specifier] of Object.entries(VENDOR)) assets.set(`vendor-${name}.js`, { type: TYPES['.js'], body: readFileSync(require.resolve(specifier)) });
    return assets;
  }
}
