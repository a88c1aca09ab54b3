import { z } from "@hono/zod-openapi";
import { errorResponses } from "../openapi-errors";
import { jsonContent, messageSchema } from "../schemas";
import { emailTemplatesAnswer } from "./schemas";

/** How case-backend answers a read of a global or SMS template whose type has none. */
export const EMPTY_TEMPLATE_NOTE =
  'A type without a template answers an empty one (`id` "", no translations), as case-backend does. ';

/** The answers of a read of a global or SMS template: the template, or an empty one. */
export const readTemplateResponses = <T extends z.ZodType>(template: T) => ({
  200: jsonContent(z.object({ template }), "the template (empty when the type has none)"),
  ...errorResponses([400, 401, 403]),
});

/** The answers of a template's save: what the 404 and 409 mean differs between kinds of template. */
export const saveTemplateResponses = <T extends z.ZodType>(template: T, errors: { 404: string; 409: string }) => ({
  200: jsonContent(z.object({ template }), "the saved template"),
  ...errorResponses([400, 401, 403, 404, 409], errors),
});

/** The answers of a list of e-mail templates across studies or of none; `listed` says by what they are listed. */
export const listEmailTemplatesResponses = (listed: string) => ({
  200: jsonContent(emailTemplatesAnswer, listed),
  ...errorResponses([401, 403]),
});

/** The answers of a template's deletion, the same whether or not there was one. */
export const deleteTemplateResponses = {
  200: jsonContent(messageSchema, '`{"message": "template deleted"}`'),
  ...errorResponses([400, 401, 403]),
};
