/** Creating a study with its rules and settings (orchestrates studies, rules and study config). */
export * from "./study-setup";
