/** sbom-generate's work: read the lockfiles at a workspace path and build one BOM of them. */
import type { ToolContext } from '@tos/sdk';
import { installedLicenses } from '../../shared/licenses/installed';
import { findLockfiles, readLockfile, type LockfileFormat } from '../../shared/lockfiles';
import { buildBom, projectDirectoryName, type BomSource } from './build';
import type { SpecVersion } from './spec-versions';
import type { SbomGenerateInput, SbomGenerateOutput } from './sbom-generate.tool';

export async function generateSbom(input: SbomGenerateInput, ctx: ToolContext, tool: { name: string; version: string }): Promise<SbomGenerateOutput> {
  const files = await findLockfiles(ctx.workspace, input.path);
  const sources: BomSource[] = [];
  for (const [index, file] of files.entries()) {
    ctx.signal.throwIfAborted();
    const lockfile = await readLockfile(ctx.workspace, file);
    sources.push({ lockfile, licenses: await installedLicenses(ctx.workspace, lockfile, ctx.signal) });
    ctx.progress(Math.round(((index + 1) / files.length) * 80), `${file} read`);
  }
  const { bom, components } = buildBom(sources, { specVersion: input.spec_version, includeDev: input.include_dev, fallbackName: projectDirectoryName(input.path), tool });
  const listed = (bom.components ?? []) as Array<{ licenses?: unknown[] }>;
  ctx.progress(100, `${components} components`);
  return {
    bom,
    spec_version: input.spec_version,
    component_count: components,
    licensed_components: listed.filter((component) => (component.licenses?.length ?? 0) > 0).length,
    lockfiles: sources.map(({ lockfile }) => ({ file: lockfile.file, format: lockfile.format, ecosystem: lockfile.ecosystem, packages: lockfile.packages.length })),
  };
}
