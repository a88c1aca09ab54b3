// Survey definitions: upload, versions, the current version, unpublish, response version checks.
export * from "./survey-definition";
export * from "./survey-version-id";
export * from "./survey-versions";
export * from "./response-version-check";
