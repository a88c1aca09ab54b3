/** Files participants upload (CASE's participant files): type and size checks, the study's upload rule, storage in the shared file store. */
export * from "./file-types";
export * from "./upload-rule";
export * from "./participant-files";
