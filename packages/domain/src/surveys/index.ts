// Survey definitions: upload, versions, the current version, unpublish, response version checks.
export * from "./survey-definition";
export * from "./survey-version-id";
export * from "./survey-versions";
export * from "./response-version-check";
// Deleting a rules version (study configuration); exported here until study-config/index.ts lists it.
export { deleteRulesVersion, type DeletedRulesVersion } from "../study-config/rules-versions";
