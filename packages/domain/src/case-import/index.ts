// Taking over a CASE deployment: a case-backend mongodump read as a stream and imported into studyflow.
export * from "./case-values";
export * from "./dump-reader";
