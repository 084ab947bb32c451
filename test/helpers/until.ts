/** Polls `probe` every 25 ms until it returns something other than null; fails after `ms`, naming `what`. */
export async function until<T>(what: string, probe: () => Promise<T | null>, ms = 5_000): Promise<T> {
  const deadline = performance.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== null) return v;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
