/**
 * Typed errors of the domain. Domain code throws them; the API maps each kind to one status
 * code and an `{"error": message}` body, so the message must be safe to show to the caller.
 */
export type DomainErrorKind =
  | "invalid"
  | "unauthorized"
  | "forbidden"
  | "not-found"
  | "conflict"
  | "rule-failed"
  | "rate-limited"
  | "payload-too-large"
  | "unavailable";

export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    message: string,
  ) {
    super(message);
    this.name = "DomainError";
  }
}

export class Invalid extends DomainError {
  constructor(message: string) {
    super("invalid", message);
  }
}
export class Unauthorized extends DomainError {
  constructor(message = "authentication required") {
    super("unauthorized", message);
  }
}
export class Forbidden extends DomainError {
  constructor(message = "forbidden") {
    super("forbidden", message);
  }
}
export class NotFound extends DomainError {
  constructor(message: string) {
    super("not-found", message);
  }
}
export class Conflict extends DomainError {
  constructor(message: string) {
    super("conflict", message);
  }
}
/** The study's rules failed for this event; nothing of the event was stored. */
export class RuleFailed extends DomainError {
  constructor(message: string) {
    super("rule-failed", message);
  }
}
export class RateLimited extends DomainError {
  constructor(
    message: string,
    /** Seconds until a retry can succeed. */
    readonly retryAfterSeconds: number,
  ) {
    super("rate-limited", message);
  }
}
/** A dependency (the database, Redis) is out of reach for now; the caller may retry after a pause. */
export class Unavailable extends DomainError {
  constructor(message: string, options: { cause?: unknown; retryAfterSeconds?: number } = {}) {
    super("unavailable", message);
    this.retryAfterSeconds = options.retryAfterSeconds ?? 2;
    if (options.cause !== undefined) this.cause = options.cause;
  }
  /** Seconds a caller should wait before it tries again. */
  readonly retryAfterSeconds: number;
}

/**
 * The database connection was lost while a transaction was committing. The server may have
 * committed before it went, so the change may be saved: the caller must check before repeating
 * it (a repeated submission would be stored twice).
 */
export class CommitOutcomeUnknown extends Unavailable {
  constructor(cause: unknown) {
    super(
      "the database connection was lost while this change was being saved; it may have been saved, so check before repeating it",
      { cause },
    );
  }
}
