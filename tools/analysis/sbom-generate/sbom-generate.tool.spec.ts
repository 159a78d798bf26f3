import { Spec, Validation } from '@cyclonedx/cyclonedx-library';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runTool } from '@tos/sdk/testing';
import { buildCodeWorkspace } from '../../../test/support/code-tools/workspace';
import { SbomGenerateTool } from './sbom-generate.tool';
import type { SbomGenerateOutput } from './sbom-generate.tool';

interface CdxComponent {
  'bom-ref': string;
  name: string;
  group?: string;
  scope?: string;
  purl: string;
  hashes?: Array<{ alg: string; content: string }>;
  licenses?: unknown[];
}
interface CdxDocument {
  specVersion: string;
  metadata: { component: { 'bom-ref': string; name: string } };
  components: CdxComponent[];
  dependencies: Array<{ ref: string; dependsOn?: string[] }>;
}

const REPOSITORY = path.resolve(__dirname, '../../..');
let root: string;
beforeAll(() => (root = buildCodeWorkspace(mkdtempSync(path.join(tmpdir(), 'sbom-generate-')))));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const generate = (input: Record<string, unknown>, overrides: { signal?: AbortSignal; onProgress?: () => void; workspaceRoot?: string } = {}) =>
  runTool<SbomGenerateOutput>(SbomGenerateTool, input, { workspaceRoot: root, ...overrides });
const documentOf = (output: SbomGenerateOutput) => output.bom as unknown as CdxDocument;
const dependsOn = (document: CdxDocument, ref: string) => document.dependencies.find((entry) => entry.ref === ref)?.dependsOn ?? [];

/** Validates against the CycloneDX JSON schema of the version, as shipped by the CycloneDX library. */
async function schemaErrors(output: SbomGenerateOutput): Promise<unknown> {
  const versions = { '1.5': Spec.Version.v1dot5, '1.6': Spec.Version.v1dot6, '1.7': Spec.Version.v1dot7 } as const;
  return new Validation.JsonStrictValidator(versions[output.spec_version as keyof typeof versions]).validate(JSON.stringify(output.bom));
}

describe('SbomGenerateTool', () => {

  it.each(['1.5', '1.6', '1.7'])('writes a BOM of every lockfile format that CycloneDX %s validates', async (version) => {
    const output = await generate({ path: 'code', spec_version: version });
    expect(new Set(output.lockfiles.map((lockfile) => lockfile.format))).toEqual(new Set(['package-lock', 'yarn', 'pnpm', 'requirements', 'go.sum']));
    expect(documentOf(output).specVersion).toBe(version);
    expect(await schemaErrors(output)).toBeNull();
  });

  it("holds the lockfile's graph, integrity as hex hashes, licences, and dev packages as scope excluded", async () => {
    const output = await generate({ path: 'code/npm-app' });
    const document = documentOf(output);
    expect(output).toMatchObject({ component_count: 7, licensed_components: 7 });
    expect(document.metadata.component).toMatchObject({ name: 'shop-api', 'bom-ref': 'shop-api@1.0.0' });
    expect(dependsOn(document, 'shop-api@1.0.0')).toEqual(['pkg:npm/express@4.17.1', 'pkg:npm/lodash@4.17.20', 'pkg:npm/minimist@1.2.5']);
    expect(dependsOn(document, 'pkg:npm/express@4.17.1')).toEqual(['pkg:npm/body-parser@1.19.0', 'pkg:npm/debug@2.6.9', 'pkg:npm/qs@6.7.0']);
    const lock = JSON.parse(readFileSync(path.join(root, 'code/npm-app/package-lock.json'), 'utf8')) as { packages: Record<string, { integrity: string }> };
    const qs = document.components.find((component) => component.name === 'qs')!;
    expect(qs.hashes).toEqual([{ alg: 'SHA-512', content: Buffer.from(lock.packages['node_modules/qs'].integrity.slice('sha512-'.length), 'base64').toString('hex') }]);
    expect(qs.licenses).toEqual([{ license: { id: 'BSD-3-Clause' } }]);
    expect(document.components.find((component) => component.name === 'minimist')?.scope).toBe('excluded');

    const production = documentOf(await generate({ path: 'code/npm-app', include_dev: false }));
    expect(production.components.map((component) => component.name)).not.toContain('minimist');
    expect(dependsOn(production, 'shop-api@1.0.0')).not.toContain('pkg:npm/minimist@1.2.5');
  });

  it('names Go modules by namespace in purl and group, and PyPI packages by normalised name', async () => {
    const go = documentOf(await generate({ path: 'code/go-app' }));
    expect(go.components.find((component) => component.name === 'text')).toMatchObject({ group: 'golang.org/x', purl: 'pkg:golang/golang.org/x/text@v0.3.5' });
    const python = documentOf(await generate({ path: 'code/python-app' }));
    expect(python.components.map((component) => component.purl)).toEqual(['pkg:pypi/django@3.2.0', 'pkg:pypi/jinja2@2.11.2', 'pkg:pypi/pyyaml@5.4', 'pkg:pypi/urllib3@2.0.0rc1']);
  });

  it("describes this repository's own package-lock.json, bounded and valid", async () => {
    const started = Date.now();
    const output = await generate({ path: 'package-lock.json' }, { workspaceRoot: REPOSITORY });
    expect(output.component_count).toBeGreaterThan(100);
    expect(documentOf(output).metadata.component.name).toBe('tool-orchestration-service');
    // A scoped npm package: the scope is the group and the purl namespace.
    expect(documentOf(output).components.find((component) => component.group === '@nestjs' && component.name === 'core')?.purl).toMatch(/^pkg:npm\/%40nestjs\/core@11\./);
    expect(await schemaErrors(output)).toBeNull();
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('refuses bad input naming the parameter', async () => {
    await expect(generate({ path: 'code', spec_version: '1.4' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'spec_version' } });
    await expect(generate({ path: '../..' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'path' } });
    await expect(generate({ path: 'code/iac' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'path' } });
  });

  it('refuses a lockfile that does not parse, naming it', async () => {
    mkdirSync(path.join(root, 'broken'));
    writeFileSync(path.join(root, 'broken/pnpm-lock.yaml'), "lockfileVersion: '9.0'\npackages:\n  a@1.0.0: [unclosed\n");
    await expect(generate({ path: 'broken' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'path', received: 'broken/pnpm-lock.yaml' } });
  });

  it('stops when cancelled between lockfiles', async () => {
    const controller = new AbortController();
    let calls = 0;
    const running = generate({ path: 'code' }, { signal: controller.signal, onProgress: () => ++calls === 1 && controller.abort(new Error('cancelled')) });
    await expect(running).rejects.toThrow('cancelled');
    expect(calls).toBe(1);
  });
});
