import type { z } from "zod";
import { Invalid } from "../errors";

/** A zod failure of an export request as one Invalid naming the field, e.g. `format: invalid option`. */
export function invalidFrom(error: z.ZodError): Invalid {
  const issue = error.issues[0];
  const path = issue?.path.join(".") || "request";
  return new Invalid(`${path}: ${issue?.message ?? "invalid"}`);
}

/**
 * Exports guard participants' text against spreadsheet formulas unless asked not to: a researcher
 * opening a file by double-click should not run what a participant typed. CASE does not guard, so
 * `guardFormulas: false` is how to get its exact bytes.
 */
export const GUARD_FORMULAS_DEFAULT = true;
