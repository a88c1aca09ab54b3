/** Participant sign-in: password sign-in, sign-up, e-mail verification, OTPs, and their abuse limits. */
export * from "./sign-in";
