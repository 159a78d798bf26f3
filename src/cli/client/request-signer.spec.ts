import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../../identity/request-signature';
import { RequestSigner } from './request-signer';

describe('RequestSigner', () => {
  it('never sends one signature twice: an identical request in the same second waits for the next', async () => {
    const signer = new RequestSigner(`sk_sig_${'a'.repeat(32)}`);
    const parts = { method: 'GET', pathWithQuery: '/v1/executions/exec_1', body: '' };
    const first = await signer.headers(parts);
    const started = Date.now();
    await signer.headers({ ...parts, pathWithQuery: '/v1/usage' });
    expect(Date.now() - started).toBeLessThan(100); // another request does not wait
    const again = await signer.headers(parts);
    expect(Number(again[TIMESTAMP_HEADER])).toBeGreaterThan(Number(first[TIMESTAMP_HEADER]));
    expect(again[SIGNATURE_HEADER]).not.toBe(first[SIGNATURE_HEADER]);
  });
});
