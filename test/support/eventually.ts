/**
 * Waits (real time) until `check` returns something truthy, and returns it; after `timeoutMs`
 * it throws naming `what`. For suites whose service works in the background (a worker, a serve
 * process, a loopback server): the one bounded wait of test/, polled every 20 ms.
 */
export async function eventually<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
