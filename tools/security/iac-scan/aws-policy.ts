/**
 * IAM policy statements, whatever wrote them (Terraform's aws_iam_policy_document blocks, policy
 * JSON in Terraform or CloudFormation), judged for full admin, wildcard actions and public principals.
 */
export type Path = ReadonlyArray<string | number>;

export interface Statement {
  /** Where the statement (or the policy holding it) is written. */
  path: Path;
  allow: boolean;
  actions: string[];
  resources: string[];
  principals: string[];
  conditioned: boolean;
}

export interface PolicyFault {
  path: Path;
  message: string;
  admin: boolean;
  wildcard: boolean;
  publicPrincipal: boolean;
}

export function policyFaults(statements: readonly Statement[]): PolicyFault[] {
  return statements.flatMap((statement) => {
    if (!statement.allow) return [];
    const everyAction = statement.actions.includes('*');
    const serviceWildcards = statement.actions.filter((action) => /^[\w-]+:\*$/.test(action));
    const everyResource = statement.resources.includes('*');
    const admin = everyAction && everyResource;
    const wildcard = everyAction || serviceWildcards.length > 0;
    const publicPrincipal = statement.principals.includes('*') && !statement.conditioned;
    if (!admin && !wildcard && !publicPrincipal) return [];
    const parts = [
      everyAction ? 'Allows "*"' : serviceWildcards.length > 0 ? `Allows ${serviceWildcards.join(', ')}` : undefined,
      everyResource && wildcard ? 'on every resource' : undefined,
      publicPrincipal ? `${wildcard ? 'to' : 'Allows'} any principal ("*") without a condition` : undefined,
    ].filter(Boolean);
    return [{ path: statement.path, message: parts.join(' '), admin, wildcard, publicPrincipal }];
  });
}

/** The statements of a policy document (`{ Statement: [...] }`, parsed JSON or YAML), each at `path`. */
export function documentStatements(document: unknown, path: (index: number) => Path): Statement[] {
  const statements = list((document as Record<string, unknown> | null)?.Statement).filter((entry): entry is Record<string, unknown> => typeof entry === 'object' && entry !== null);
  return statements.map((statement, index) => ({
    path: path(index),
    allow: statement.Effect === 'Allow',
    actions: list(statement.Action).map(String),
    resources: list(statement.Resource).map(String),
    principals: principalsOf(statement.Principal),
    conditioned: statement.Condition !== undefined,
  }));
}

function principalsOf(principal: unknown): string[] {
  if (typeof principal === 'string') return [principal];
  if (principal && typeof principal === 'object' && !Array.isArray(principal)) return Object.values(principal).flatMap((value) => list(value).map(String));
  return [];
}

function list(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  return value === undefined || value === null ? [] : [value];
}
