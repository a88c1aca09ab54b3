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
export class Unavailable extends DomainError {
  constructor(message: string) {
    super("unavailable", message);
  }
}
