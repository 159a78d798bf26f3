import type { FastifyRequest } from 'fastify';
import { AppException } from '../common/errors';
import { MemoryWindowStore } from '../limits/window-store';
import { limitOAuthEndpoint } from './endpoint-limits';

const from = (ip: string) => ({ ip }) as FastifyRequest;

describe('limitOAuthEndpoint', () => {
  it('counts registration and the token endpoint (revocation included) per client IP, each in its own window', async () => {
    const windows = new MemoryWindowStore();
    const call = (path: string, ip = '10.0.0.1') => limitOAuthEndpoint(windows, 2, from(ip), path);
    await call('/oauth/reg');
    await call('/oauth/reg/some-client');
    const refused = await call('/oauth/reg').then(() => null, (err: AppException) => err);
    expect(refused).toBeInstanceOf(AppException);
    expect(refused).toMatchObject({ code: 'RATE_LIMITED', status: 429, options: { details: { limit: 2 } } });
    expect(refused!.options.retry_after).toBeGreaterThan(0);

    await call('/oauth/token');
    await call('/oauth/token/revocation');
    await expect(call('/oauth/token')).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    await expect(call('/oauth/reg', '10.0.0.2')).resolves.toBeUndefined(); // another address, another window
  });

  it('leaves the other /oauth paths and lookalikes uncounted', async () => {
    const windows = new MemoryWindowStore();
    for (const path of ['/oauth/auth', '/oauth/jwks', '/oauth/.well-known/openid-configuration', '/oauth/interaction/x', '/oauth/register', '/oauth/tokens']) {
      for (let i = 0; i < 3; i++) await expect(limitOAuthEndpoint(windows, 1, from('10.0.0.1'), path)).resolves.toBeUndefined();
    }
  });
});
