export * from "./run-actions";
export * from "./connection";
