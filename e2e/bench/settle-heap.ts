/**
 * A full garbage collection of the bench's own process, before a measured phase: seeding and the
 * floor's hundreds of megabytes leave garbage whose collection (V8's concurrent marking and
 * sweeping, on threads of their own) otherwise runs during the next phase, on the same two cores
 * as the work measured. Run before the floor and before each export alike.
 *
 * `--expose-gc` is set at run time (it cannot go in NODE_OPTIONS), and a fresh context then carries
 * the `gc` function.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

setFlagsFromString("--expose-gc");
const collect = runInNewContext("gc") as () => void;

/** Collects everything the process no longer holds, then lets the sweeper threads finish. */
export async function settleHeap(): Promise<void> {
  collect();
  await new Promise((resolve) => setTimeout(resolve, 100));
}
