/**
 * Extracts, from GitHub's published OpenAPI description of api.github.com (the npm package
 * `@octokit/openapi`, 385 MB unpacked), the operations the forge tools call and every schema they
 * reference, into `github-operations.json` beside this file. The fake forge's answers are checked
 * against that file in the tool specs. Re-runnable; after bumping OPENAPI_PACKAGE run
 *
 *   npx ts-node --transpile-only test/support/forge/openapi/extract.ts [path/to/api.github.com.json]
 *
 * Without a path the script fetches the package tarball with `npm pack` into a temp directory and
 * reads the one file it needs; nothing is installed.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

export const OPENAPI_PACKAGE = '@octokit/openapi@23.0.2';
const DESCRIPTION_FILE = 'package/generated/api.github.com.json';

/** The operations the forge tools call (method, path template): what the fake forge serves. */
export const OPERATIONS: ReadonlyArray<readonly [method: string, path: string]> = [
  ['get', '/repos/{owner}/{repo}'],
  ['get', '/users/{username}'],
  ['get', '/repos/{owner}/{repo}/pulls'],
  ['get', '/repos/{owner}/{repo}/pulls/{pull_number}'],
  ['get', '/repos/{owner}/{repo}/pulls/{pull_number}/files'],
  ['get', '/repos/{owner}/{repo}/pulls/{pull_number}/reviews'],
  ['get', '/repos/{owner}/{repo}/commits/{ref}/check-runs'],
  ['get', '/repos/{owner}/{repo}/commits/{ref}/status'],
  ['get', '/repos/{owner}/{repo}/actions/workflows/{workflow_id}'],
  ['get', '/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs'],
  ['get', '/repos/{owner}/{repo}/actions/runs/{run_id}'],
  ['post', '/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches'],
  ['get', '/repos/{owner}/{repo}/issues/{issue_number}/comments'],
  ['post', '/repos/{owner}/{repo}/issues/{issue_number}/comments'],
  ['patch', '/repos/{owner}/{repo}/issues/comments/{comment_id}'],
];

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** One operation as the fake and its checks need it: JSON schemas only, `$ref`s into `components.schemas`. */
export interface ExtractedOperation {
  method: string;
  path: string;
  parameters: Array<{ name: string; in: string; required: boolean; schema: JsonObject }>;
  requestBody: JsonObject | null;
  /** Status → JSON body schema (null: the status has no JSON body, e.g. 204 or 304). */
  responses: Record<string, JsonObject | null>;
}

export interface ExtractedDescription {
  source: string;
  openapi: string;
  version: string;
  operations: Record<string, ExtractedOperation>;
  components: { schemas: Record<string, JsonObject> };
}

function extract(description: JsonObject): ExtractedDescription {
  const components = description.components as JsonObject;
  const resolve = (node: JsonObject): JsonObject => {
    const ref = node.$ref;
    if (typeof ref !== 'string' || ref.startsWith('#/components/schemas/')) return node;
    const [, , kind, name] = ref.split('/');
    return resolve((components[kind] as JsonObject)[name] as JsonObject);
  };
  const operations: Record<string, ExtractedOperation> = {};
  for (const [method, template] of OPERATIONS) {
    const operation = ((description.paths as JsonObject)[template] as JsonObject | undefined)?.[method] as JsonObject | undefined;
    if (!operation) throw new Error(`${method.toUpperCase()} ${template} is not in the description`);
    const jsonSchemaOf = (holder: JsonObject): JsonObject | null =>
      ((((resolve(holder).content as JsonObject | undefined)?.['application/json'] as JsonObject | undefined)?.schema as JsonObject | undefined) ?? null);
    operations[operation.operationId as string] = {
      method,
      path: template,
      parameters: ((operation.parameters as JsonObject[] | undefined) ?? []).map(resolve).map((p) => ({
        name: p.name as string,
        in: p.in as string,
        required: p.required === true,
        schema: p.schema as JsonObject,
      })),
      requestBody: operation.requestBody ? jsonSchemaOf(operation.requestBody as JsonObject) : null,
      responses: Object.fromEntries(Object.entries(operation.responses as JsonObject).map(([status, response]) => [status, jsonSchemaOf(response as JsonObject)])),
    };
  }
  return {
    source: `${OPENAPI_PACKAGE} ${DESCRIPTION_FILE.replace(/^package\//, '')}`,
    openapi: description.openapi as string,
    version: (description.info as JsonObject).version as string,
    operations,
    components: { schemas: referencedSchemas(operations as unknown as Json, (components.schemas as Record<string, JsonObject>)) },
  };
}

/** Every `components.schemas` entry the operations reach, transitively. */
function referencedSchemas(root: Json, all: Record<string, JsonObject>): Record<string, JsonObject> {
  const found: Record<string, JsonObject> = {};
  const visit = (node: Json): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== 'object') return;
    const ref = node.$ref;
    if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) {
      const name = ref.slice('#/components/schemas/'.length);
      if (!found[name]) {
        found[name] = withoutExamples(all[name]) as JsonObject;
        visit(found[name]);
      }
    }
    Object.values(node).forEach(visit);
  };
  visit(root);
  return Object.fromEntries(Object.entries(found).sort(([a], [b]) => a.localeCompare(b)));
}

/** `example(s)` members are documentation, not constraints: dropped to keep the file small. */
function withoutExamples(node: Json): Json {
  if (Array.isArray(node)) return node.map(withoutExamples);
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(Object.entries(node).filter(([key]) => key !== 'example' && key !== 'examples').map(([key, value]) => [key, withoutExamples(value)]));
}

function readDescription(file: string | undefined): JsonObject {
  if (file) return JSON.parse(readFileSync(file, 'utf8')) as JsonObject;
  const dir = mkdtempSync(path.join(tmpdir(), 'octokit-openapi-'));
  try {
    const tarball = execFileSync('npm', ['pack', '--silent', OPENAPI_PACKAGE], { cwd: dir, encoding: 'utf8' }).trim().split('\n').pop()!;
    execFileSync('tar', ['xzf', tarball, DESCRIPTION_FILE], { cwd: dir });
    return JSON.parse(readFileSync(path.join(dir, DESCRIPTION_FILE), 'utf8')) as JsonObject;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const extracted = extract(readDescription(process.argv[2]));
  const target = path.join(__dirname, 'github-operations.json');
  writeFileSync(target, `${JSON.stringify(extracted, null, 1)}\n`);
  console.log(`${Object.keys(extracted.operations).length} operations, ${Object.keys(extracted.components.schemas).length} schemas -> ${target}`);
}
