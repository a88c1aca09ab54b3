/** The participant's own account as CASE shows it, and the changes a participant makes to it. */
export * from "./case-user";
export * from "./profiles";
export * from "./main-profile";
export * from "./remove-profile";
export * from "./change-password";
export * from "./change-email";
export * from "./contact-preferences";
