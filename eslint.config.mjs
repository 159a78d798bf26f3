// The one lint rule the platform enforces: tools and extension modules import nothing of src/
// except the SDK (src/tools/sdk and its testing entry), so the SDK stays the boundary.
import tseslint from 'typescript-eslint';

const forbidden = {
  patterns: [
    {
      regex: '(^|/)src/(?!tools/sdk(/testing)?$)',
      message: 'Tools import only the SDK (src/tools/sdk, or src/tools/sdk/testing in tests).',
    },
  ],
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**'] },
  {
    files: ['tools/**/*.ts', 'test/extension-fixture/**/*.ts'],
    // tools/index.ts is the platform's loader module for the folder, not a tool.
    ignores: ['tools/index.ts'],
    languageOptions: { parser: tseslint.parser },
    rules: { 'no-restricted-imports': ['error', forbidden] },
  },
);
