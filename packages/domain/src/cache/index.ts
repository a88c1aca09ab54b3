/** The read cache of rows many requests read (studies, sessions), invalidated across replicas. */
export * from "./read-cache";
