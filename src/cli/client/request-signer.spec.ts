import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../../identity/request-signature';
import { RequestSigner } from './request-signer';

describe('RequestSigner', () => {
  it('never sends one signature twice: an identical request in the same second waits for the next', async () => {
    const signer = new RequestSigner(`sk_sig_${'a'.repeat(32)}`);
    const parts = { method: 'GET', pathWithQuery: '/v1/executions/exec_1', body: '' };
    const first = await signer.headers(parts);
    const other = await signer.headers({ ...parts, pathWithQuery: '/v1/usage' });
    const again = await signer.headers(parts);
    expect(other[TIMESTAMP_HEADER]).toBe(first[TIMESTAMP_HEADER]);
    expect(Number(again[TIMESTAMP_HEADER])).toBe(Number(first[TIMESTAMP_HEADER]) + 1);
    expect(again[SIGNATURE_HEADER]).not.toBe(first[SIGNATURE_HEADER]);
  });
});
