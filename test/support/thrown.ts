/** The error `fn` throws, for assertions on its fields; fails the test when nothing is thrown. */
export function thrownBy<E = Error>(fn: () => unknown): E {
  try {
    fn();
  } catch (err) {
    return err as E;
  }
  throw new Error('expected an error to be thrown');
}
