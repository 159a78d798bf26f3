// The import boundaries the platform enforces: tools and extension modules import nothing of src/,
// only the SDK through its package name (`@tos/sdk`, tests also `@tos/sdk/testing`), so the SDK
// stays the boundary and an extension package compiles against the SDK alone; and inside
// tools/, a tool imports its own folder, tools/shared/ and an integration's index, never another
// tool's folder (tools/tool-boundaries.spec.ts holds the exact rule; this one answers in the editor).
import tseslint from 'typescript-eslint';

const FAMILIES = '(analysis|automation|integration|monitoring|security)';
const sdkOnly = {
  regex: '(^|/)src(/|$)|^@tos/sdk/(?!testing$)',
  message: "Tools import only the SDK, as '@tos/sdk' (tests also '@tos/sdk/testing'), never a path into src/.",
};
const integrationIndex = {
  regex: '(^|/)integrations/[^/]+/',
  message: "Import an integration through its public face, tools/integrations/<name> (its index.ts), not its files.",
};
const otherTool = {
  regex: `^(\\.\\./)+${FAMILIES}/|^\\.\\./(?!\\.\\./)`,
  message: "A tool imports its own folder, tools/shared/ and integrations, never another tool's folder: move what both need to tools/shared or an integration.",
};
const sharedReachingOut = {
  regex: `(^|/)(integrations|${FAMILIES})(/|$)`,
  message: 'tools/shared/ is used by tools and integrations; it imports neither.',
};

const parser = { languageOptions: { parser: tseslint.parser } };

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'tools/*/fixtures/**'] },
  {
    ...parser,
    files: ['test/extension-fixture/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [sdkOnly] }] },
  },
  {
    ...parser,
    files: ['tools/**/*.ts'],
    // tools/index.ts is the platform's loader module for the folder, not a tool.
    ignores: ['tools/index.ts', 'tools/shared/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [sdkOnly, integrationIndex, otherTool] }] },
  },
  {
    ...parser,
    files: ['tools/shared/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [sdkOnly, sharedReachingOut] }] },
  },
);
