/** Participant sign-in: sessions, refresh tokens, OTPs, sign-up, and their abuse limits. */
export * from "./session-revocation";
export * from "./sessions";
export * from "./sign-in";
export { renderSignInMail, SIGN_IN_MAIL_TEMPLATES } from "./mail-templates";
