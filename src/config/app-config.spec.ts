import { ConfigError, loadConfig } from './app-config';

describe('loadConfig', () => {
  it('applies the embedded defaults when nothing is set', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ PORT: 3000, HOST: '127.0.0.1', DATA_DIR: './data', WORKSPACE_ROOT: './workspace', LOG_LEVEL: 'info', BOOTSTRAP_TIER: 'free' });
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.publicUrl).toBe('http://localhost:3000');
  });

  it('reads and converts set values', () => {
    const config = loadConfig({ PORT: '8080', DATABASE_URL: 'postgres://u@db:5432/tos', PUBLIC_URL: 'https://tools.example.com/', BOOTSTRAP_TIER: 'pro' });
    expect(config).toMatchObject({ PORT: 8080, DATABASE_URL: 'postgres://u@db:5432/tos', BOOTSTRAP_TIER: 'pro' });
    expect(config.publicUrl).toBe('https://tools.example.com');
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x'],
    ['BOOTSTRAP_API_KEY', 'sk_user_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'],
    ['BOOTSTRAP_TIER', 'gold'],
    ['LOG_LEVEL', 'loud'],
    ['AUTH_CACHE_TTL_SECONDS', '-1'],
  ])('stops with a message naming %s=%s', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}=`));
  });

  it.each([
    ['BOOTSTRAP_API_KEY', 'sk_svc_Short1secretVALUE', 'Short1secretVALUE'],
    ['METRICS_TOKEN', 'tok3nSecret', 'tok3nSecret'],
    ['DATABASE_URL', 'mysql://tos:Hunter2pw@db:3306/tos', 'Hunter2pw'],
    ['REDIS_URL', 'http://default:Hunter2pw@cache:6379', 'Hunter2pw'],
    ['DATABASE_URL', 'postgresql:/tos:Hun@ter/2#pw@db/tos', 'ter/2#pw'],
    ['DATABASE_URL', 'tos:Hunter2pw@db/tos', 'Hunter2pw'],
  ])('names %s but never shows the secret in it', (name, value, secret) => {
    let message = '';
    try {
      loadConfig({ [name]: value });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain(`${name}=`);
    expect(message).not.toContain(secret);
  });

  it('shows a malformed URL with its password masked, so the rest can still be judged', () => {
    expect(() => loadConfig({ DATABASE_URL: 'mysql://tos:Hunter2pw@db:3306/tos' })).toThrow('DATABASE_URL="mysql://tos:***@db:3306/tos"');
  });

  it.each([
    ['OAUTH_ISSUER', 'login.example.com'],
    ['OAUTH_ISSUER', 'ftp://login.example.com'],
    ['OAUTH_JWKS_URL', 'not a url'],
  ])('stops on a malformed %s=%s', (name, value) => {
    expect(() => loadConfig({ [name]: value, PUBLIC_URL: 'https://tos.example.com' })).toThrow(new RegExp(`${name}=`));
  });

  it('points OAUTH_ISSUER at the built-in authorization server when OAUTH_BUILTIN is on, and needs PUBLIC_URL for it', () => {
    expect(loadConfig({ OAUTH_BUILTIN: 'true', PUBLIC_URL: 'https://tos.example.com/' }).OAUTH_ISSUER).toBe('https://tos.example.com/oauth');
    expect(loadConfig({ OAUTH_BUILTIN: 'true', PUBLIC_URL: 'https://tos.example.com', OAUTH_ISSUER: 'https://login.example.com' }).OAUTH_ISSUER).toBe('https://login.example.com');
    expect(loadConfig({ PUBLIC_URL: 'https://tos.example.com' }).OAUTH_ISSUER).toBeUndefined();
    expect(() => loadConfig({ OAUTH_BUILTIN: 'true' })).toThrow(/OAUTH_BUILTIN: set PUBLIC_URL too/);
    expect(() => loadConfig({ OAUTH_BUILTIN: 'yes' })).toThrow(/OAUTH_BUILTIN must be true or false/);
  });

  it('takes OAUTH_ISSUER only with PUBLIC_URL, the base of the token audiences', () => {
    expect(() => loadConfig({ OAUTH_ISSUER: 'https://login.example.com' })).toThrow(/OAUTH_ISSUER: set PUBLIC_URL too/);
    expect(loadConfig({ OAUTH_ISSUER: 'https://login.example.com', PUBLIC_URL: 'https://tos.example.com' }).OAUTH_ISSUER).toBe('https://login.example.com');
  });

  it('takes single sign-on only whole: client, secret, rules and PUBLIC_URL; https unless loopback; valid rules; secret never shown', () => {
    const rules = JSON.stringify([{ group: 'ops', account: 'acct_1', role: 'owner' }]);
    const sso = { OIDC_ISSUER: 'https://login.example.com', OIDC_CLIENT_ID: 'tos', OIDC_CLIENT_SECRET: 'a-client-secret-value', OIDC_RULES: rules, PUBLIC_URL: 'https://tos.example.com' };
    expect(loadConfig(sso)).toMatchObject({ OIDC_ISSUER: sso.OIDC_ISSUER, OIDC_SCOPES: 'openid email profile', OIDC_GROUPS_CLAIM: 'groups' });
    expect(() => loadConfig({ ...sso, OIDC_CLIENT_SECRET: '', OIDC_RULES: '' })).toThrow(/OIDC_ISSUER: set OIDC_CLIENT_SECRET, OIDC_RULES too/);
    expect(() => loadConfig({ ...sso, OIDC_ISSUER: 'http://login.example.com' })).toThrow(/must be https \(plain http only on a loopback address\)/);
    expect(loadConfig({ ...sso, OIDC_ISSUER: 'http://127.0.0.1:4000' }).OIDC_ISSUER).toBe('http://127.0.0.1:4000');
    expect(() => loadConfig({ ...sso, OIDC_RULES: '[{"group":"ops","account":"acct_1","role":"root"}]' })).toThrow(/OIDC_RULES: rule 0: role must be one of owner, member, viewer/);
    expect(() => loadConfig({ ...sso, OIDC_SCOPES: 'email profile' })).toThrow(/OIDC_SCOPES: must include openid/);
    let message = '';
    try {
      loadConfig({ ...sso, OIDC_CLIENT_SECRET: 'x'.repeat(2000) });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/OIDC_CLIENT_SECRET/);
    expect(message).not.toContain('xxxxxxxx');
  });

  it('maps token claims through the rules only for an external issuer that has them', () => {
    const rules = JSON.stringify([{ group: 'ops', account: 'acct_1', role: 'owner' }]);
    expect(loadConfig({ OAUTH_SUBJECT: 'claims', OAUTH_ISSUER: 'https://login.example.com', PUBLIC_URL: 'https://tos.example.com', OIDC_RULES: rules }).OAUTH_SUBJECT).toBe('claims');
    expect(() => loadConfig({ OAUTH_SUBJECT: 'claims', OAUTH_ISSUER: 'https://login.example.com', PUBLIC_URL: 'https://tos.example.com' })).toThrow(/OAUTH_SUBJECT=claims: set OAUTH_ISSUER .* and OIDC_RULES/);
    expect(() => loadConfig({ OAUTH_SUBJECT: 'claims', OAUTH_BUILTIN: 'true', PUBLIC_URL: 'https://tos.example.com', OIDC_RULES: rules })).toThrow(/built-in authorization server's tokens name accounts/);
    expect(() => loadConfig({ OAUTH_SUBJECT: 'sub' })).toThrow(/OAUTH_SUBJECT must be account or claims/);
  });

  it('treats empty strings as unset', () => {
    expect(loadConfig({ DATABASE_URL: '', BOOTSTRAP_API_KEY: '' }).DATABASE_URL).toBeUndefined();
  });
});
