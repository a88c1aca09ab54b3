/**
 * V8's young generation for the API and the worker: semi-spaces of at most 16 MB.
 *
 * Left to itself, V8 sizes the young generation from the machine's memory: on a 24 GiB machine a
 * semi-space may grow to 64 MB. Both apps allocate fast while they load (modules, schemas, the
 * OpenAPI document), so V8 grows it to that size during start-up and never gives it back: the
 * compiled API and worker then idled at 283 and 277 MB, where with 16 MB they idle at 155 and
 * 154 MB, and an export worker's peak fell from about 305 to 172 MB (wide) and 340 to 193 MB (long).
 * Submits, sign-ins and exports ran at the same rates and CPU either way (docs/benchmarks.md,
 * "Idle processes"): their garbage is short-lived, and a scavenge costs what survives it, not
 * the size of the space.
 *
 * Set through NODE_OPTIONS, which the image's ENV and the supervisor (`npm start`, `npm run dev`)
 * give both apps. An operator's own `--max-semi-space-size` in NODE_OPTIONS is kept.
 */
export const YOUNG_SEMI_SPACE_MB = 16;

const SEMI_SPACE_OPTION = /(^|\s)--max-semi-space-size(=|\s|$)/;

/** NODE_OPTIONS with the semi-space cap added, unless it sets one already. */
export function withYoungGenerationCap(nodeOptions: string | undefined): string {
  const given = nodeOptions?.trim() ?? "";
  if (SEMI_SPACE_OPTION.test(given)) return given;
  const cap = `--max-semi-space-size=${YOUNG_SEMI_SPACE_MB}`;
  return given === "" ? cap : `${given} ${cap}`;
}
