/** Leaves every folder may use: the audit record, batched sweeps, the clock. */
export * from "./audit";
export * from "./clock";
export * from "./batched-sweep";
export * from "./unique-conflict";
