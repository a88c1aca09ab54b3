export * from "./schema/index";
export * from "./client";
export { runMigrations, migrationsFolder } from "./migrate";
