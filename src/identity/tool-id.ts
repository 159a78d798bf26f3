/**
 * Any tool id a key, a filter or a subscription may name: a built-in's (`secret-scan`), a published
 * workflow's (`workflow.nightly`) or an upstream's (`pets.listPets`: the upstream's name, then the
 * tool's name as MCP allows it, docs/upstreams.md). Whether the account has such a tool is checked
 * where it matters.
 */
export const TOOL_ID = /^[a-z0-9][a-z0-9-]{0,63}(?:\.[A-Za-z0-9_.-]{1,128})?$/;
