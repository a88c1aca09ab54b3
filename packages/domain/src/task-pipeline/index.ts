/** The task-kind table and the chunk loop every task kind runs in: plan, process a chunk, finalise. */
export * from "./plan-task";
export * from "./process-chunk";
export * from "./finalize-task";
export * from "./task-kinds";
