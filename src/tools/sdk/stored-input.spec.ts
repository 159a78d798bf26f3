import { requestHeadersInput, type ToolInputProperty } from './definition';
import { credentialInputNames, isCredentialHeader, REDACTED, redactStoredInput } from './stored-input';

const inputs: Record<string, ToolInputProperty> = {
  url: { type: 'string', description: 'u' },
  token: { type: 'string', writeOnly: true, description: 't' },
  headers: requestHeadersInput('h'),
};

describe('redactStoredInput', () => {
  it.each(['Authorization', 'proxy-authorization', 'Cookie', 'Set-Cookie', 'X-Api-Key', 'x-auth-token', 'Private-Token', 'X-Functions-Key', 'Ocp-Apim-Subscription-Key', 'X-Hub-Signature-256', 'X-Vault-Token'])(
    '%s is a credential header',
    (name) => expect(isCredentialHeader(name)).toBe(true),
  );

  it.each(['Accept', 'Content-Type', 'X-Request-Id', 'User-Agent', 'X-Trace', 'Monkey-Business'])('%s is not', (name) => expect(isCredentialHeader(name)).toBe(false));

  it('redacts secret inputs and credential header values, keeps the rest, and leaves the given input alone', () => {
    const input = { url: 'https://x', token: 'hunter2', headers: { Authorization: 'Bearer hunter2', Accept: 'text/plain' } };
    const original = structuredClone(input);
    expect(redactStoredInput(inputs, input)).toEqual({ url: 'https://x', token: REDACTED, headers: { Authorization: REDACTED, Accept: 'text/plain' } });
    expect(input).toEqual(original);
    expect(credentialInputNames(inputs, input)).toEqual(['token', 'headers']);
  });

  it('returns an input without credentials as it is', () => {
    const input = { url: 'https://x', headers: { Accept: 'text/plain' } };
    expect(redactStoredInput(inputs, input)).toBe(input);
    expect(credentialInputNames(inputs, input)).toEqual([]);
  });

  it('judges a stored (already redacted) input the same way: it still lacks its credentials', () => {
    const stored = redactStoredInput(inputs, { headers: { Cookie: 'a=b' } });
    expect(credentialInputNames(inputs, stored)).toEqual(['headers']);
    expect(redactStoredInput(inputs, stored)).toEqual(stored);
  });
});
