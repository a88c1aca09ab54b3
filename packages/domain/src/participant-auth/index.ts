/** Participant sign-in: sessions, refresh tokens, OTPs, sign-up, and their abuse limits. */
export * from "./session-revocation";
export * from "./sessions";
