/** The account lifecycle rounds: unverified accounts reminded and removed, inactive ones notified and deleted. */
export * from "./lifecycle-rounds";
export * from "./lifecycle-mails";
