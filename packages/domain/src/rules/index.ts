/** Study rules versions and the services the engine reaches through (counters, code lists, variables, old responses). */
export * from "./study-rules";
export * from "./postgres-engine-services";
export * from "./rule-issues";
export * from "./message-refusal";
