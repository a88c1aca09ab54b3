/**
 * Polls `url` until it answers 200, reading each answer to its end (an unread body holds its
 * connection open). `gone` is asked between attempts: when it names why the server cannot answer
 * any more (its process ended), the wait fails at once with that. Each attempt may take 1 s.
 */
export async function waitForHttpOk(
  url: string,
  options: {
    gone: () => string | undefined | Promise<string | undefined>;
    /** What the failure adds when the time is up (the server's output). */
    output: () => string;
    timeoutMs: number;
    intervalMs?: number;
  },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  while (Date.now() < deadline) {
    const why = await options.gone();
    if (why !== undefined) throw new Error(`${url}: ${why}`);
    const status = await fetch(url, { signal: AbortSignal.timeout(1_000) })
      .then(async (response) => {
        await response.arrayBuffer();
        return response.status;
      })
      .catch(() => 0);
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 100));
  }
  throw new Error(`${url} did not answer 200 within ${options.timeoutMs} ms:\n${options.output()}`);
}
