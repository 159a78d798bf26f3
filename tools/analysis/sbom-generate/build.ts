/**
 * A CycloneDX BOM of a project's lockfiles with the CycloneDX library: one library component per
 * installed package version (purl as bom-ref, SRI integrity as hashes, licences when the workspace
 * records them, dev-only packages in scope `excluded`), the dependency graph, and the project as
 * the metadata component that depends on its direct dependencies.
 */
import { Contrib, Enums, Models, Serialize, Spec } from '@cyclonedx/cyclonedx-library';
import * as path from 'node:path';
import { PackageURL } from 'packageurl-js';
import parseSpdx from 'spdx-expression-parse';
import type { KnownLicense } from '../../shared/licenses/installed';
import type { Ecosystem, LockedPackage, Lockfile } from '../../shared/lockfiles';
import type { SpecVersion } from './spec-versions';

const SPECS: Readonly<Record<SpecVersion, typeof Spec.Spec1dot6>> = { '1.7': Spec.Spec1dot7, '1.6': Spec.Spec1dot6, '1.5': Spec.Spec1dot5 };
const SRI_ALGORITHMS: Readonly<Record<string, Enums.HashAlgorithm>> = {
  sha512: Enums.HashAlgorithm['SHA-512'],
  sha384: Enums.HashAlgorithm['SHA-384'],
  sha256: Enums.HashAlgorithm['SHA-256'],
  sha1: Enums.HashAlgorithm['SHA-1'],
};
const PURL_TYPES: Readonly<Record<Ecosystem, string>> = { npm: 'npm', PyPI: 'pypi', Go: 'golang' };
const licenseFactory = new Contrib.License.Factories.LicenseFactory((expression: string) => void parseSpdx(expression));

export interface BomSource {
  lockfile: Lockfile;
  licenses: Map<string, KnownLicense>;
}

export interface BuildOptions {
  specVersion: SpecVersion;
  includeDev: boolean;
  /** The project when the lockfiles do not name it: the scanned directory's name. */
  fallbackName: string;
  tool: { name: string; version: string };
}

export function buildBom(sources: BomSource[], options: BuildOptions): { bom: Record<string, unknown>; components: number } {
  const bom = new Models.Bom();
  bom.serialNumber = Contrib.Bom.Utils.randomSerialNumber();
  bom.metadata.timestamp = new Date();
  bom.metadata.tools.components.add(new Models.Component(Enums.ComponentType.Application, options.tool.name, { version: options.tool.version }));
  const project = sources.find((source) => source.lockfile.project.name)?.lockfile.project ?? { name: options.fallbackName };
  const root = new Models.Component(Enums.ComponentType.Application, project.name || options.fallbackName, {
    version: project.version,
    bomRef: `${project.name || options.fallbackName}@${project.version ?? ''}`,
  });
  bom.metadata.component = root;

  // Components first, edges second: the serializer links dependencies by BomRef object, not by value.
  const components = new Map<string, Models.Component>();
  const kept = sources.map(({ lockfile, licenses }) => {
    const packages = lockfile.packages.filter((entry) => options.includeDev || !entry.dev);
    const refs = new Map(packages.map((entry) => [entry.key, purlOf(lockfile.ecosystem, entry)]));
    for (const entry of packages) {
      const ref = refs.get(entry.key)!;
      if (!components.has(ref)) components.set(ref, componentOf(lockfile.ecosystem, entry, ref, licenses.get(entry.key)));
    }
    return { packages, refs };
  });
  for (const { packages, refs } of kept) {
    for (const entry of packages) {
      const component = components.get(refs.get(entry.key)!)!;
      for (const dependency of entry.dependencies) {
        const target = refs.get(dependency);
        if (target) component.dependencies.add(components.get(target)!.bomRef);
      }
      if (entry.direct) root.dependencies.add(component.bomRef);
    }
  }
  for (const component of components.values()) bom.components.add(component);
  // Sorted lists make the document the same for the same lockfiles (serial number and time aside).
  const json = new Serialize.JSON.Normalize.Factory(SPECS[options.specVersion]).makeForBom().normalize(bom, { sortLists: true });
  return { bom: json as unknown as Record<string, unknown>, components: components.size };
}

function componentOf(ecosystem: Ecosystem, entry: LockedPackage, purl: string, license: KnownLicense | undefined): Models.Component {
  const { group, name } = splitName(ecosystem, entry.name);
  const component = new Models.Component(Enums.ComponentType.Library, name, {
    group,
    version: entry.version,
    bomRef: purl,
    purl,
  });
  if (entry.dev) component.scope = Enums.ComponentScope.Excluded;
  const hash = entry.integrity && hashOf(entry.integrity);
  if (hash) component.hashes.set(hash.algorithm, hash.content);
  if (license) component.licenses.add(licenseFactory.makeFromString(license.license));
  if (entry.resolved && /^https?:\/\//.test(entry.resolved)) {
    component.externalReferences.add(new Models.ExternalReference(entry.resolved, Enums.ExternalReferenceType.Distribution));
  }
  return component;
}

function purlOf(ecosystem: Ecosystem, entry: LockedPackage): string {
  const { group, name } = splitName(ecosystem, entry.name);
  return new PackageURL(PURL_TYPES[ecosystem], group, name, entry.version, undefined, undefined).toString();
}

/** npm scopes and Go module paths are the purl namespace (and the CycloneDX group). */
function splitName(ecosystem: Ecosystem, fullName: string): { group?: string; name: string } {
  if (ecosystem === 'PyPI') return { name: fullName };
  const slash = fullName.lastIndexOf('/');
  if (slash === -1 || (ecosystem === 'npm' && !fullName.startsWith('@'))) return { name: fullName };
  return { group: fullName.slice(0, slash), name: fullName.slice(slash + 1) };
}

/** `sha512-<base64>` (Subresource Integrity) → the algorithm and hex digest CycloneDX wants. */
function hashOf(integrity: string): { algorithm: Enums.HashAlgorithm; content: string } | undefined {
  const [first] = integrity.trim().split(/\s+/);
  const dash = first.indexOf('-');
  const algorithm = SRI_ALGORITHMS[first.slice(0, dash).toLowerCase()];
  if (!algorithm) return undefined;
  const content = Buffer.from(first.slice(dash + 1), 'base64').toString('hex');
  return content.length > 0 ? { algorithm, content } : undefined;
}

export function projectDirectoryName(target: string): string {
  return path.posix.basename(path.posix.resolve('/', target)) || 'project';
}
