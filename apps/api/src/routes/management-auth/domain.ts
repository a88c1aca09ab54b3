/*
 * The management-user repository (packages/domain/src/management-users), reached by path until
 * @studyflow/domain's index exports it; then this file re-exports from "@studyflow/domain".
 */
export * from "../../../../../packages/domain/src/management-users/users";
export * from "../../../../../packages/domain/src/management-users/sessions";
