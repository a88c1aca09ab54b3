// The subset of Go's text/template (html/template's escaping) that CASE's e-mail templates use.
export {
  GoTemplateError,
  MAX_TEMPLATE_NESTING,
  MAX_TEMPLATE_OUTPUT_BYTES,
  MAX_TEMPLATE_STEPS,
  executeGoTemplate,
  goTemplateProblem,
  parseGoTemplate,
  renderGoTemplate,
  type GoTemplate,
} from "./go-template";
