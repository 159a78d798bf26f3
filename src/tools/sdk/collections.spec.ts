import { compareText, countBy, tally } from './collections';

describe('ordering and counting', () => {
  it('orders text by code unit, whatever the locale', () => {
    expect(['b', 'B', 'a', 'é', 'A'].sort(compareText)).toEqual(['A', 'B', 'a', 'b', 'é']);
  });

  it('counts into every key given, zero included', () => {
    expect(countBy(['high', 'low', 'none'], ['low', 'high', 'low'], (level) => level as 'high' | 'low')).toEqual({ high: 1, low: 2, none: 0 });
  });

  it('tallies keys not known in advance, in the order first met', () => {
    expect([...tally('abracadabra', (char) => char)]).toEqual([['a', 5], ['b', 2], ['r', 2], ['c', 1], ['d', 1]]);
  });
});
