export * from "./task-jobs";
export * from "./connection";
export * from "./scheduled-work";
export * from "./task-queue";
export * from "./account-deletion";
export * from "./account-lifecycle";
