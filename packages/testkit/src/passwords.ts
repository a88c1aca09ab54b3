/** A password that satisfies the account password rule, for tests that create accounts. */
export const STRONG_PASSWORD = "Correct-Horse-Battery-9";
