/**
 * What CASE-shaped routes share: key matching, pagination, query forms, the instance id. A CASE
 * body is read by defineRoute's `caseBody`; errors are answered by the app's one onError.
 */
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
export { caseBoolQuery, caseSecondsQuery, caseJsonQueryParam } from "./query-params";
export { checkInstanceId } from "./instance";
