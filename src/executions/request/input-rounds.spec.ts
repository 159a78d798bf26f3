import type { AppConfig } from '../../config/app-config';
import { InputRounds } from './input-rounds';

describe('InputRounds', () => {
  const binding = { keyId: 'key_1', subject: 'cluster-apply', input: { manifest: 'a', confirm: true } };
  const answers = { confirm: { action: 'accept', content: { apply: true } } };
  const rounds = new InputRounds({ SECRETS_KEY: 'a shared deployment key' } as AppConfig);

  it('gives back the answers a state it sealed carries, for the same call only', () => {
    const state = rounds.seal(binding, answers);
    expect(rounds.open(binding, state)).toEqual(answers);
    // Input members in another order are the same input.
    expect(rounds.open({ ...binding, input: { confirm: true, manifest: 'a' } }, state)).toEqual(answers);
    for (const other of [{ ...binding, keyId: 'key_2' }, { ...binding, subject: 'prompt:cluster-apply' }, { ...binding, input: { manifest: 'b', confirm: true } }]) {
      expect(() => rounds.open(other, state)).toThrow(/belongs to another call/);
    }
  });

  it("refuses a state past its hour, altered, or sealed under another key; processes sharing SECRETS_KEY accept each other's", () => {
    const sealedAt = Date.now();
    const state = rounds.seal(binding, answers, sealedAt);
    expect(() => rounds.open(binding, state, sealedAt + 60 * 60_000 + 1)).toThrow(/expired/);
    const [payload, mac] = state.split('.');
    for (const altered of [`${payload}x.${mac}`, `${payload}.${mac.slice(1)}`, `${state}.extra`, payload, '']) {
      expect(() => rounds.open(binding, altered)).toThrow(/not issued by this service or was altered/);
    }
    expect(new InputRounds({ SECRETS_KEY: 'a shared deployment key' } as AppConfig).open(binding, state)).toEqual(answers);
    expect(() => new InputRounds({ SECRETS_KEY: 'another key' } as AppConfig).open(binding, state)).toThrow(/altered/);
    expect(() => new InputRounds({} as AppConfig).open(binding, state)).toThrow(/altered/);
  });
});
