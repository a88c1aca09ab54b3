/** Deleting a participant's account: the request, the durable deletion task, its status. */
export * from "./request-deletion";
export * from "./deletion-targets";
export * from "./run-deletion";
export * from "./deletion-status";
export * from "./reauthentication";
