/**
 * The size of an app's young generation, as its own /metrics reports it (prom-client's default
 * `nodejs_heap_space_size_total_bytes` gauge): V8 grows it during start-up, and the apps cap it
 * (packages/config/src/young-generation.ts).
 */
import { YOUNG_SEMI_SPACE_MB } from "@studyflow/config";

/** The most the new space may take under the cap: two semi-spaces. */
export const CAPPED_NEW_SPACE_BYTES = 2 * YOUNG_SEMI_SPACE_MB * 1024 * 1024;

export function newSpaceBytes(metricsText: string): number {
  const match = /^nodejs_heap_space_size_total_bytes\{space="new"\} (\d+)$/m.exec(metricsText);
  if (!match) throw new Error(`no new space gauge in the metrics:\n${metricsText.slice(0, 500)}`);
  return Number(match[1]);
}
