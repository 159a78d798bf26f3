/**
 * The fake forge's objects in GitHub's REST shapes: every member the published description
 * requires, with URLs built the way api.github.com builds them (templates included).
 */
/** Where the forge answers: `api` is the REST base (…/api/v3 for an Enterprise Server), `web` the site. */
export interface ForgeUrls {
  api: string;
  web: string;
}

export type Json = Record<string, unknown>;

export const nodeId = (kind: string, id: number) => Buffer.from(`0:${kind}${id}`).toString('base64');
