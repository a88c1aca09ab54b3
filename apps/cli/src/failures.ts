import { DrizzleQueryError } from "drizzle-orm";
import { ConfigError } from "@studyflow/config";
import { DomainError } from "@studyflow/domain/errors";

/** Wrong command line: unknown command or flag, missing or malformed value. Exit code 1. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

export interface Failure {
  exitCode: 1 | 2;
  message: string;
}

/** Domain errors that mean "your input is wrong" rather than "the system failed". */
const INPUT_ERROR_KINDS = new Set<DomainError["kind"]>([
  "invalid",
  "not-found",
  "conflict",
  "forbidden",
  "payload-too-large",
]);

/**
 * The exit code and the one message shown for a failure. Messages never include a stack trace,
 * nor a failed query's parameters (they can hold password hashes); the driver's reason is enough.
 */
export function describeFailure(error: unknown): Failure {
  if (error instanceof UsageError) return { exitCode: 1, message: error.message };
  if (error instanceof ConfigError)
    return { exitCode: 1, message: `invalid configuration: ${error.issues.join("; ")}` };
  if (error instanceof DomainError) {
    return { exitCode: INPUT_ERROR_KINDS.has(error.kind) ? 1 : 2, message: error.message };
  }
  if (error instanceof DrizzleQueryError) {
    const cause = error.cause instanceof Error ? error.cause.message : "query failed";
    return { exitCode: 2, message: `database error: ${cause}` };
  }
  if (error instanceof Error) return { exitCode: 2, message: error.message || error.name };
  return { exitCode: 2, message: String(error) };
}
