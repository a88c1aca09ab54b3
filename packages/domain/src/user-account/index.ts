/** The participant's own account as CASE shows it, and the changes a participant makes to it. */
export * from "./case-user";
