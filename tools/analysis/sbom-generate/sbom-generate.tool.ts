import { Tool, type ToolContext, type ToolHandler, workspaceInputs, defineTool, type ToolInput, type ToolOutput, workspacePathInput } from '@tos/sdk';
import { LOCKFILE_NAMES_TEXT, MAX_LOCKFILES } from '../../shared/lockfiles';
import { lockfilesOutput } from '../../shared/scan';
import { SPEC_VERSIONS } from './spec-versions';
import { SBOM_GENERATE_EXAMPLES } from './examples';

export type SbomGenerateInput = ToolInput<typeof definition>;
export type SbomGenerateOutput = ToolOutput<typeof definition>;

const VERSION = '1.0.0';

const definition = defineTool({
  id: 'sbom-generate',
  name: 'SBOM Generate',
  category: 'analysis',
  description:
    'Builds a CycloneDX SBOM (JSON, spec 1.6 by default) of a project from its lockfiles: components with purl, version, hashes from lockfile integrity, licences when recorded, and the dependency graph.',
  status: 'ready',
  version: VERSION,
  cacheable: true,
  isolated: true,
  timeout: 120,
  rate_limit: 30,
  input: {
    type: 'object',
    properties: {
      ...workspaceInputs(),
      path: workspacePathInput(`A lockfile (${LOCKFILE_NAMES_TEXT}) in the workspace, or a directory whose lockfiles (up to ${MAX_LOCKFILES}) all go into one BOM.`),
      spec_version: { type: 'string', enum: [...SPEC_VERSIONS], default: '1.6', description: 'CycloneDX specification version of the document.' },
      include_dev: { type: 'boolean', default: true, description: 'Include packages installed only for development (as scope "excluded").' },
    },
  },
  output: {
    type: 'object',
    properties: {
      bom: {
        type: 'object',
        description: 'The CycloneDX document (bomFormat, specVersion, serialNumber, metadata, components, dependencies); serialNumber and metadata.timestamp differ per call.',
      },
      spec_version: { type: 'string', description: 'CycloneDX version of the document.' },
      component_count: { type: 'integer', description: 'Components (distinct package versions) in the BOM.' },
      licensed_components: { type: 'integer', description: 'Components whose licence the lockfile or the installed package.json states.' },
      lockfiles: lockfilesOutput(),
    },
    required: ['bom', 'spec_version', 'component_count', 'licensed_components', 'lockfiles'],
  },
  examples: SBOM_GENERATE_EXAMPLES,
});

@Tool(definition)
export class SbomGenerateTool implements ToolHandler<typeof definition> {
  async execute(input: SbomGenerateInput, ctx: ToolContext<typeof definition>): Promise<SbomGenerateOutput> {
    // The CycloneDX library loads on the first call, not with the catalogue.
    const { generateSbom } = await import('./generate');
    return generateSbom(input, ctx, { name: 'tool-orchestration-service sbom-generate', version: VERSION });
  }
}
