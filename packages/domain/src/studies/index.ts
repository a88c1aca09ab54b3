/** Study rows: reading, permissions on them, deletion. */
export * from "./study-repository";
export * from "./delete-study";
export * from "./study-permissions";
