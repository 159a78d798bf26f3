import type { ToolSecrets } from '../sdk/context';
import { ToolError } from '../sdk/tool-error';

/** Where an account's own secrets come from (the encrypted store; absent until it exists). */
export interface AccountSecretSource {
  find(accountId: string, name: string): Promise<string | undefined>;
}

/**
 * ctx.secrets: the account's secret, else the service-wide setting of that name. Only settings
 * the tool declared reach it from the environment, so a caller-named secret cannot read
 * DATABASE_URL or SECRETS_KEY.
 */
export function createToolSecrets(serviceWide: Readonly<Record<string, unknown>>, accountId: string | null, accounts?: AccountSecretSource): ToolSecrets {
  const find = async (name: string): Promise<string | undefined> => {
    const own = accountId && accounts ? await accounts.find(accountId, name) : undefined;
    if (own !== undefined) return own;
    const setting = Object.prototype.hasOwnProperty.call(serviceWide, name) ? serviceWide[name] : undefined;
    return setting === undefined || setting === '' ? undefined : String(setting);
  };
  return {
    find,
    get: async (name) => {
      const value = await find(name);
      if (value === undefined) {
        throw new ToolError(`Secret '${name}' is not set`, {
          details: { secret: name },
          suggestion: `Set it for your account with PUT /v1/secrets/${name} (or 'tos secrets set ${name}'), or ask the operator to set the environment variable ${name}`,
        });
      }
      return value;
    },
  };
}
