export {
  CASE_FIELDS,
  resolveCaseField,
  type CaseFilterTarget,
  type CaseFilterCollection,
  type CaseField,
} from "./fields";
export {
  translateCaseFilter,
  CASE_FILTER_OPERATORS,
  MAX_FILTER_CONDITIONS,
  MAX_FILTER_DEPTH,
  MAX_IN_VALUES,
} from "./translate-filter";
export { translateCaseSort, type CaseSortKey } from "./translate-sort";
export { parseCaseJsonParam, MAX_JSON_PARAM_LENGTH } from "./json-param";
