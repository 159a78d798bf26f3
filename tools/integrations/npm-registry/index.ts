/** The npm registry integration: REGISTRY_URL / REGISTRY_TOKEN and the licence look-up of package versions. */
export { NpmRegistryLicenses } from './npm-registry';
export { NPM_REGISTRY_SETTINGS } from './settings';
