import type { Database } from "@studyflow/db";
import type { FileStore, FileStoreConfig } from "./file-store";
import { createFilesystemFileStore } from "./filesystem-file-store";
import { createPostgresFileStore } from "./postgres-file-store";

export * from "./file-store";
export { createPostgresFileStore } from "./postgres-file-store";
export { createFilesystemFileStore } from "./filesystem-file-store";

/** The store of export files: PostgreSQL unless the configuration asks for a shared directory. */
export function createFileStore(db: Database, config: FileStoreConfig = {}): FileStore {
  if (config.backend === "filesystem") {
    if (!config.directory) throw new Error("the filesystem file store needs a directory");
    return createFilesystemFileStore(config.directory);
  }
  return createPostgresFileStore(db);
}
