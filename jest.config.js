/** Unit tests live beside the code; e2e contract suites live in test/. */
const transform = { '^.+\\.ts$': ['ts-jest', { isolatedModules: true }] };
// `@tos/sdk` is the SDK's folder, as tsconfig.json's `paths` says.
const moduleNameMapper = { '^@tos/sdk(/.*)?$': '<rootDir>/src/tools/sdk$1' };
// Fixtures hold package manifests (npm projects, image contents): they are data, not modules to resolve.
const common = { testEnvironment: 'node', transform, moduleNameMapper, moduleFileExtensions: ['ts', 'js', 'json'], modulePathIgnorePatterns: ['<rootDir>/tools/[^/]+/fixtures/'] };

module.exports = {
  // Per-project testTimeout is ignored by Jest; e2e suites boot databases and processes.
  testTimeout: 60000,
  // A worker runs many suites, each booting the service in its own module registry: what they leave
  // grows its heap until the service's own guards read "short of memory" (JSONata refuses retryably
  // past 75 % of the heap), as a late suite in a full run did. A worker past this is restarted.
  workerIdleMemoryLimit: '1GB',
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/tools/**/*.spec.ts', '<rootDir>/scripts/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
