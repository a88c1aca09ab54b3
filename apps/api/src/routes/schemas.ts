import { z } from "@hono/zod-openapi";

/** Request and response pieces several resources share; response shapes of domain objects live with their presenters. */

export const messageSchema = z.object({ message: z.string() }).openapi("Message");

export const jsonContent = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

export const jsonBody = <T extends z.ZodType>(schema: T, description?: string) => ({
  required: true,
  ...(description ? { description } : {}),
  content: { "application/json": { schema } },
});

/** A management token, or a service account's API key (either one, never both). */
export const MANAGEMENT_SECURITY: Record<string, string[]>[] = [{ managementBearer: [] }, { serviceApiKey: [] }];
export const PARTICIPANT_SECURITY = [{ participantBearer: [] }];

/** Keys of studies, surveys and the like: printable, bounded. */
export const keyString = (name: string) =>
  z
    .string()
    .min(1, `${name} must not be empty`)
    .max(200, `${name} is longer than 200 characters`)
    .regex(/^[^\s/?#]+$/, `${name} must not contain spaces, '/', '?' or '#'`);

export const studyKeyParam = z.object({
  studyKey: keyString("studyKey").openapi({ param: { name: "studyKey", in: "path" }, example: "covid-cohort" }),
});

export const profileIdField = z
  .string()
  .min(1, "profileID must not be empty")
  .max(200, "profileID is longer than 200 characters");

/** The engine's ResponseItem: one answer, or a group of them. */
export interface ResponseItem {
  key: string;
  value?: string;
  dtype?: string;
  items?: ResponseItem[];
}

/** A JSON value's type as zod's messages name it. */
const receivedType = (value: unknown) => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value);

interface ItemIssue {
  path: (string | number)[];
  message: string;
}

/**
 * Each way `value` is not a ResponseItem, worded as zod words it and in the order zod reports them,
 * with its path below the item. The nesting is walked here rather than by a recursive zod schema:
 * zod takes a recursive schema through its cycle memoizer at every level, which made up more than
 * half of a submitted response's validation (1.8–3.2 µs per parse of the validation bench's
 * response against 4.0–7.9 µs, docs/benchmarks.md). A body is at most MAX_JSON_DEPTH deep by the
 * time this runs.
 */
export function responseItemIssues(value: unknown): ItemIssue[] {
  return isResponseItem(value) ? [] : issuesOf(value, [], []);
}

/** Whether `value` is a ResponseItem: the common case, walked without building a path. */
function isResponseItem(value: unknown): value is ResponseItem {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const item = value as Record<string, unknown>;
  if (typeof item.key !== "string") return false;
  if (item.value !== undefined && typeof item.value !== "string") return false;
  if (item.dtype !== undefined && typeof item.dtype !== "string") return false;
  if (item.items === undefined) return true;
  if (!Array.isArray(item.items)) return false;
  for (const child of item.items as unknown[]) if (!isResponseItem(child)) return false;
  return true;
}

function issuesOf(value: unknown, path: (string | number)[], issues: ItemIssue[]): ItemIssue[] {
  const expected = (type: string, at: (string | number)[], received: unknown) =>
    issues.push({ path: at, message: `Invalid input: expected ${type}, received ${receivedType(received)}` });
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    expected("object", path, value);
    return issues;
  }
  const item = value as Record<string, unknown>;
  if (typeof item.key !== "string") expected("string", [...path, "key"], item.key);
  for (const field of ["value", "dtype"]) {
    if (item[field] !== undefined && typeof item[field] !== "string") expected("string", [...path, field], item[field]);
  }
  if (item.items !== undefined) {
    if (!Array.isArray(item.items)) expected("array", [...path, "items"], item.items);
    else item.items.forEach((child: unknown, i) => issuesOf(child, [...path, "items", i], issues));
  }
  return issues;
}

/** A valid item with only its own fields, as zod's object schemas give their output: other members are dropped. */
function ownFields(item: ResponseItem): ResponseItem {
  const copy: ResponseItem = { key: item.key };
  if (item.value !== undefined) copy.value = item.value;
  if (item.dtype !== undefined) copy.dtype = item.dtype;
  if (item.items !== undefined) copy.items = item.items.map(ownFields);
  return copy;
}

// A named component, so the OpenAPI document refers to the recursive shape instead of expanding it.
const responseItem = z
  .custom<ResponseItem>()
  .check((ctx) => {
    for (const issue of responseItemIssues(ctx.value)) {
      ctx.issues.push({ code: "custom", input: ctx.value, path: issue.path, message: issue.message });
    }
  })
  .overwrite(ownFields)
  .openapi("ResponseItem", {
    type: "object",
    properties: {
      key: { type: "string" },
      value: { type: "string" },
      dtype: { type: "string" },
      items: { type: "array", items: { $ref: "#/components/schemas/ResponseItem" } },
    },
    required: ["key"],
  });

const surveyItemResponse = z.object({
  key: z.string().min(1, "response item key must not be empty"),
  meta: z.unknown().optional(),
  response: responseItem.optional(),
  confidentialMode: z.string().optional(),
  mapToKey: z.string().optional(),
});

const unixSeconds = z.number().int().min(0).max(253_402_300_799);

/** A survey response as participant apps and researchers submit it (the CASE SurveyResponse). */
export const submittedResponseSchema = z
  .object({
    key: keyString("key").openapi({ description: "survey key", example: "intake" }),
    versionId: z.string().max(200).optional().openapi({
      description:
        "the survey version answered; a non-empty one must name an uploaded version (see the study's unknownSurveyVersion)",
    }),
    openedAt: unixSeconds.optional(),
    submittedAt: unixSeconds.optional(),
    responses: z.array(surveyItemResponse).max(10_000).optional(),
    context: z.record(z.string(), z.string()).optional(),
  })
  .openapi("SurveyResponse");

export const surveyKeyField = keyString("surveyKey").openapi({
  param: { name: "surveyKey", in: "path" },
  example: "intake",
});

/** `?profileID=` of the participant's reads: which of the signed-in user's profiles is asking. */
export const profileIdQuery = z.object({
  profileID: profileIdField.openapi({ param: { name: "profileID", in: "query" } }),
});

/** A study's rule set is small; this bound stops a body from keeping the validator busy. */
export const MAX_RULES = 1_000;

/** `{rules}`: a rule set as the engine's validator takes it (the validator checks each rule). */
export const ruleSetBody = z.object({
  rules: z
    .array(z.unknown())
    .max(MAX_RULES, `at most ${MAX_RULES} rules`)
    .openapi({ description: "rule expressions in the CASE study-engine JSON form: {name, data?}" }),
});
