// Survey definitions: upload, versions, the current version, unpublish.
export * from "./survey-definition";
export * from "./survey-version-id";
export * from "./survey-versions";
