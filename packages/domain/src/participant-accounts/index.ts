/** The participant's account as CASE shows it, its profiles, and the changes a participant makes to it. */
export * from "./case-user";
export * from "./profiles";
export * from "./main-profile";
export * from "./remove-profile";
export * from "./change-password";
export * from "./change-email";
export * from "./contact-preferences";
export * from "./preferred-language";
export * from "./user-attributes";
/** Passwords, password reset, and the one-time links mailed to an account's address. */
export * from "./passwords";
export * from "./password-reset";
export * from "./account-tokens";
export * from "./account-token-sweep";
/** The account mails: their message types, and the sign-in mails the outbox renders. */
export * from "./account-message-types";
export { renderSignInMail, SIGN_IN_MAIL_TEMPLATES } from "./sign-in-mails";
/** Operators' tools for participant accounts: find by e-mail, lock, unlock, sign out everywhere. */
export * from "./operator-account-tools";
export * from "./deletion/index";
export * from "./lifecycle/index";
