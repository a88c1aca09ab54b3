/** Participant sessions: access and refresh tokens, renewal, and ending one session or all of them. */
export * from "./sessions";
export * from "./session-revocation";
