/**
 * How many threads an API process's libuv pool has: the pool starts them all at its first job, so
 * a sign-in attempt (argon2id checks an unknown address against a dummy hash) comes first.
 */
import { readFile, readdir } from "node:fs/promises";
import { threadPoolSize } from "@studyflow/config";

/** The pool the API gives itself on this machine when UV_THREADPOOL_SIZE is not set. */
export const expectedThreadPool = () => threadPoolSize(undefined);

export async function libuvPoolThreads(apiPort: number, pid: number): Promise<number> {
  const attempt = await fetch(`http://127.0.0.1:${apiPort}/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "nobody@example.org", password: "harbour lights at dusk" }),
  });
  if (attempt.status !== 401) throw new Error(`sign-in attempt answered ${attempt.status}: ${await attempt.text()}`);
  let threads = 0;
  for (const task of await readdir(`/proc/${pid}/task`)) {
    const name = await readFile(`/proc/${pid}/task/${task}/comm`, "utf8").catch(() => "");
    if (name.trim() === "libuv-worker") threads++;
  }
  return threads;
}
