/** Task rows: creating, listing, status words, the task-kind contract. */
export * from "./task-service";
export * from "./task-status-words";
export * from "./task-list";
export * from "./task-kind";
