/** Polls `probe` until it returns a value (not undefined), or fails after `timeoutMs` naming `what`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
