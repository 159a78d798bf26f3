/**
 * The tool SDK: the only module a tool or an extension module imports.
 *
 * A tool is one class decorated with `@Tool({...})` that implements `ToolHandler`.
 * It never touches Nest internals, the database or the HTTP request: it gets its
 * validated `input` and a `ToolContext`, returns its output object or throws `ToolError`.
 * The test kit is the separate entry `sdk/testing`.
 */
export * from './definition';
export * from './context';
export * from './tool-error';
export * from './resources-and-prompts';
export { exactlyOneOf, notBoth } from './input-rules';
export { isCredentialHeader, redactStoredInput, credentialInputNames, REDACTED } from './stored-input';
export { importEsm } from './import-esm';
export { boundedRegexExec, boundedRegexTest, boundedRun, compileRegex, regexTookTooLong } from './bounded-regex';
export { compareText, countBy, tally } from './collections';
export { refInput, textSource, workspaceInputs, workspacePathInput, type TextSource } from './workspace-inputs';
export { networkError } from './network-errors';
export { BoundedJsonata, type EvaluationBounds } from './bounded-jsonata';
