/** Operators' tools for participant accounts: find by e-mail, lock, unlock, sign out everywhere. */
export * from "./operator-account-tools";
