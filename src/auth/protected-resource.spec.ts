import { loadConfig } from '../config/app-config';
import { bearerChallenge, insufficientScopeChallenge, metadataUrl, protectedResourceMetadata, resourceIdentifier, resourcePathOf } from './protected-resource';

const config = loadConfig({ PUBLIC_URL: 'https://tos.example.com/', OAUTH_ISSUER: 'https://login.example.com' });

describe('protected resource', () => {
  it.each([
    ['/v1/mcp', '/v1/mcp'],
    ['/v1/mcp?x=1', '/v1/mcp'],
    ['/v1/mcp/', '/v1/mcp'],
    ['/v1/mcpx', '/v1'],
    ['/v1', '/v1'],
    ['/v1/tools?limit=1', '/v1'],
    ['/v10/tools', null],
    ['/console/session', null],
    ['/', null],
  ])('reads %s as the resource %p', (url, resource) => {
    expect(resourcePathOf(url)).toBe(resource);
  });

  it('names each resource by its absolute URL, without a doubled slash, and its metadata by the RFC 9728 path', () => {
    expect(resourceIdentifier(config, '/v1/mcp')).toBe('https://tos.example.com/v1/mcp');
    expect(metadataUrl(config, '/v1')).toBe('https://tos.example.com/.well-known/oauth-protected-resource/v1');
    expect(protectedResourceMetadata(config, '/v1')).toMatchObject({ resource: 'https://tos.example.com/v1', authorization_servers: ['https://login.example.com'] });
    expect(protectedResourceMetadata(loadConfig({}), '/v1/mcp')).not.toHaveProperty('authorization_servers');
  });

  it('words the 401 and 403 challenges as RFC 6750 and RFC 9728 ask', () => {
    expect(bearerChallenge(config, '/v1/mcp')).toBe('Bearer resource_metadata="https://tos.example.com/.well-known/oauth-protected-resource/v1/mcp", scope="tools:read tools:invoke executions:read"');
    expect(bearerChallenge(config, '/v1', 'invalid_token')).toMatch(/^Bearer error="invalid_token", resource_metadata="[^"]+\/v1", scope="/);
    expect(insufficientScopeChallenge(config, '/v1', ['tools:read', 'webhooks:manage'])).toBe(
      'Bearer error="insufficient_scope", scope="tools:read webhooks:manage", resource_metadata="https://tos.example.com/.well-known/oauth-protected-resource/v1"',
    );
  });
});
