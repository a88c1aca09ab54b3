/**
 * What every CASE-shaped route shares: body reading, pagination, trailing slashes. Their errors are
 * answered by the app's one onError (errors.ts), as every route's are.
 */
export { caseJsonBody, caseJsonReader } from "./json-body";
export { matchKeysToSchema } from "./key-matching";
export {
  casePageQuery,
  casePagination,
  caseOffset,
  casePaginationSchema,
  CASE_DEFAULT_PAGE_SIZE,
  CASE_MAX_PAGE_SIZE,
  type CasePagination,
} from "./pagination";
export { openapiBothSlashes } from "./trailing-slash";
export { caseBoolQuery, caseSecondsQuery, caseJsonQueryParam } from "./query-params";
export { checkInstanceId } from "./instance";
export { caseRoute, type CaseRoute, type CaseRouteConfig } from "./case-route";
