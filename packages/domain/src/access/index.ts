/** Who may do what: participant and management tokens, token versions and revocations, API keys, study permissions, the secret box. */
export * from "./permissions";
export * from "./token-revocations";
export * from "./tokens";
export * from "./token-versions";
export * from "./api-keys";
export * from "./api-key-reveal";
export * from "./secret-box";
export * from "./secret-box-settings";
