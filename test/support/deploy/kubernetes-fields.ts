/**
 * Strict field validation of Kubernetes manifests, as the API server does it (kubectl's default
 * `--validate=strict`): a field the object's schema does not name is an error. The OpenAPI
 * definitions allow unknown fields, so the generated validators let a misspelt or misplaced field
 * through (`readinesProbe`, `resources` one level too deep); kubernetes-models' TypeScript
 * interfaces, generated from the same definitions, do not: each manifest is type-checked as an
 * object literal of its kind's interface, where an excess property is a compile error.
 */
import * as path from 'node:path';
import * as ts from 'typescript';

interface Manifest {
  apiVersion: string;
  kind: string;
}

/** One message per field the manifests' schemas do not have (empty: none). */
export function unknownFields(manifests: Manifest[]): string[] {
  // Beside this file, so that `kubernetes-models` resolves from the repository's node_modules.
  const file = path.join(__dirname, 'manifests.check.ts');
  const source = manifests
    .map((manifest, i) => `import type { I${manifest.kind} as T${i} } from 'kubernetes-models/${manifest.apiVersion}/${manifest.kind}';\nexport const m${i}: T${i} = ${JSON.stringify(manifest, null, 1)};`)
    .join('\n');
  const options: ts.CompilerOptions = { strict: true, noEmit: true, skipLibCheck: true, module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10, types: [] };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, readFile, fileExists } = host;
  host.getSourceFile = (name, target, ...rest) => (name === file ? ts.createSourceFile(name, source, target) : getSourceFile.call(host, name, target, ...rest));
  host.readFile = (name) => (name === file ? source : readFile.call(host, name));
  host.fileExists = (name) => name === file || fileExists.call(host, name);
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const where = diagnostic.file && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start) : undefined;
    const owner = where ? manifests[Number(/^export const m(\d+)/m.exec(source.split('\n').slice(0, where.line + 1).reverse().find((line) => line.startsWith('export const m')) ?? '')?.[1])] : undefined;
    return `${owner ? `${owner.kind}: ` : ''}${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`;
  });
}
