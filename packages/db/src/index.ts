export * from "./schema/index";
// not in the drizzle schema object: it describes columns, it is not a table
export * from "./schema/participant-fields";
export * from "./client";
export * from "./connection-errors";
export { runMigrations, migrationsFolder } from "./migrate";
export * from "./raw-client";
