/** The CycloneDX versions sbom-generate writes; the definition lists them, so they live apart from the CycloneDX library. */
export const SPEC_VERSIONS = ['1.7', '1.6', '1.5'] as const;
export type SpecVersion = (typeof SPEC_VERSIONS)[number];
