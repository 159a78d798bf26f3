/**
 * OSV advisories for scanners: records from a local bulk export or the OSV API, OSV's range
 * evaluation with a pluggable version ordering per ecosystem, and CVSS severities.
 * dependency-check uses the language orderings; image-scan adds dpkg and apk orderings.
 */
export { findAdvisories, type AdvisoryFinding, type AdvisoryLookup, type AdvisorySource, type EcosystemRules, type LookupOptions } from './advisories';
export { OsvApiClient } from './api-client';
export { fixesFor, matchRecord, type Match, type MatchOptions } from './matcher';
export type { OsvAffected, OsvRange, OsvRecord, PackageQuery } from './record';
export {
  ADVISORY_DATA_OUTPUT,
  advisorySource,
  bySeverityThenName,
  describeAdvisory,
  describeAdvisoryData,
  MIN_SEVERITIES,
  OSV_SETTINGS,
  SEVERITY_FILTER_INPUTS,
  type AdvisoryData,
} from './reporting';
export { rateSeverity, severityRank, SEVERITIES, type RatedSeverity, type Severity } from './severity';
export { apkOrdering, dpkgOrdering, goOrdering, pep440Ordering, semverOrdering, type VersionOrdering } from './version-ordering';
