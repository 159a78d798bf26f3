/**
 * Terraform: the `.tf` files of one directory (a module) parsed with @cdktn/hcl2json (HashiCorp's
 * HCL parser compiled to WebAssembly), their resources, data sources and provider blocks run
 * through the checks of every cloud. Checks may look across the module (a bucket and its
 * aws_s3_bucket_versioning are two resources); nothing is followed into other modules.
 */
import { finding, type IacFinding } from './rules';
import { AWS_CHECKS } from './terraform-aws';
import { AZURE_CHECKS } from './terraform-azure';
import { GCP_CHECKS } from './terraform-gcp';
import { HclLines } from './hcl-lines';
import { isExpression, refersTo, type Json, type TfBlock, type TfCheck, type TfModule } from './terraform-model';
import { OTHER_CLOUD_CHECKS } from './terraform-other-clouds';

const CHECKS_BY_TYPE = new Map<string, TfCheck[]>();
for (const entry of [...AWS_CHECKS, ...AZURE_CHECKS, ...GCP_CHECKS, ...OTHER_CLOUD_CHECKS]) {
  for (const type of entry.types) CHECKS_BY_TYPE.set(type, [...(CHECKS_BY_TYPE.get(type) ?? []), entry]);
}

/** Types a check reads; the documentation lists them. */
export const TERRAFORM_TYPES_CHECKED = [...CHECKS_BY_TYPE.keys()].sort();

export interface ModuleScan {
  findings: IacFinding[];
  errors: Array<{ file: string; message: string }>;
}

type Parse = (file: string, text: string) => Promise<unknown>;
const HCL2JSON = '@cdktn/hcl2json';

/** `signal` is watched between files: a parse (about 1.5 s for a 1.7 MB file here) cannot be interrupted. */
export async function scanTerraformModule(files: ReadonlyArray<{ path: string; text: string }>, signal: AbortSignal): Promise<ModuleScan> {
  // The WebAssembly parser (2 MB gzipped) loads on the first Terraform file, not with the tool.
  // Named through a constant so TypeScript does not read the package's types, which pull the DOM
  // library (`/// <reference lib="dom" />`) into the whole program.
  const { parse } = (await import(HCL2JSON)) as { parse: Parse };
  const blocks: TfBlock[] = [];
  const lines = new Map<string, HclLines>();
  const errors: ModuleScan['errors'] = [];
  for (const { path, text } of files) {
    signal.throwIfAborted();
    let parsed: unknown;
    try {
      parsed = await parse(path, text);
    } catch (error) {
      errors.push({ file: path, message: `Not valid HCL: ${((error as Error).message ?? String(error)).split('\n')[0]}` });
      continue;
    }
    const source = new HclLines(text);
    lines.set(path, source);
    blocks.push(...blocksOf(parsed as Json, path, source));
  }
  const byType = new Map<string, TfBlock[]>();
  for (const block of blocks) byType.set(block.type, [...(byType.get(block.type) ?? []), block]);
  const module: TfModule = {
    blocks,
    referring: (type, attribute, target) => (byType.get(type) ?? []).filter((block) => refersTo(block.body[attribute], target)),
  };
  const findings: IacFinding[] = [];
  for (const block of blocks) {
    for (const entry of CHECKS_BY_TYPE.get(block.type) ?? []) {
      const faults = entry.check(block, module);
      for (const fault of faults === undefined ? [] : Array.isArray(faults) ? faults : [faults]) {
        const line = lines.get(block.file)!.attribute(block.line, fault.path);
        findings.push(finding(entry.rule, { file: block.file, line, object: block.address }, fault.message));
      }
    }
  }
  return { findings, errors };
}

function blocksOf(parsed: Json, file: string, source: HclLines): TfBlock[] {
  const blocks: TfBlock[] = [];
  for (const kind of ['resource', 'data'] as const) {
    for (const [type, named] of Object.entries((parsed[kind] ?? {}) as Record<string, Record<string, Json[]>>)) {
      for (const [name, bodies] of Object.entries(named)) {
        const body = bodies[0] ?? {};
        const address = `${kind === 'data' ? 'data.' : ''}${type}.${name}`;
        blocks.push({ kind, type, name, address, body, file, line: source.header(`${kind}.${type}.${name}`) ?? 1 });
      }
    }
  }
  for (const [type, bodies] of Object.entries((parsed.provider ?? {}) as Record<string, Json[]>)) {
    for (const [occurrence, body] of bodies.entries()) {
      const alias = typeof body.alias === 'string' && !isExpression(body.alias) ? body.alias : undefined;
      blocks.push({ kind: 'provider', type, name: alias ?? type, address: `provider.${type}${alias ? `.${alias}` : ''}`, body, file, line: source.header(`provider.${type}`, occurrence) ?? 1 });
    }
  }
  return blocks;
}
