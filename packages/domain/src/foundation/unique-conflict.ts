import { isUniqueViolation } from "@studyflow/db";
import { Conflict } from "../errors";

/**
 * `work`, with a unique violation turned into the Conflict it means (`message` says what exists
 * already). The one place a unique index's refusal becomes a domain error: routes and commands
 * see Conflict, never a database code.
 */
export async function conflictOnUniqueViolation<T>(work: Promise<T>, message: string): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (isUniqueViolation(error)) throw new Conflict(message);
    throw error;
  }
}
