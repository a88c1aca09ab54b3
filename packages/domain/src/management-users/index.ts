/** Researchers and service accounts: users, sign-in and sessions, admin, permissions, app roles. */
export * from "./users";
export * from "./sessions";
export * from "./sign-in";
export * from "./admin";
export * from "./permissions";
export * from "./service-accounts";
export * from "./app-roles";
export * from "./session-sweep";
