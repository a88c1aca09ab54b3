/** Run-actions over many participants: the rule run of a batch, the previous-responses kind, bulk tuning, result files. */
export * from "./bulk-tuning";
export * from "./result-store";
export * from "./participant-rule-run";
export * from "./previous-responses-kind";
