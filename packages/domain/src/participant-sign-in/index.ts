/** Participant sign-in: password sign-in, sign-up, e-mail verification, OTPs, and their abuse limits. */
export * from "./sign-in";
/** What a participant token says about its account, for clients that ask (CASE's token/validate). */
export * from "./token-infos";
