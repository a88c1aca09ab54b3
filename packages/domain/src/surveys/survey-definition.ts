import { jsonInputProblem } from "@studyflow/engine";
import { DomainError, Invalid } from "../errors";

/**
 * Largest survey definition accepted, serialized. Every participant fetch sends the whole
 * definition, so it stays bounded; a large multilingual questionnaire fits with room to spare,
 * and the API's 2 MiB body limit stays above it, so an oversized upload gets this limit's message.
 */
export const MAX_SURVEY_DEFINITION_BYTES = 1024 * 1024;

/**
 * PostgreSQL's jsonb holds neither NUL nor a lone surrogate, and its parser recurses; the API
 * checks bodies the same way (input-boundary.ts), this covers definitions read from files.
 */
const MAX_DEFINITION_DEPTH = 256;

/** Fields of a CASE Survey that the server sets; what a client sends in them is dropped. */
const SERVER_FIELDS = ["id", "versionId", "published", "unpublished"] as const;

export class SurveyDefinitionTooLarge extends DomainError {
  constructor(bytes: number) {
    super(
      "payload-too-large",
      `survey definition is ${bytes} bytes serialized; the limit is ${MAX_SURVEY_DEFINITION_BYTES} bytes (1 MiB)`,
    );
  }
}

/** A survey definition as it is stored: the survey's key, the CASE Survey without the server's fields, its size. */
export interface SurveyDefinitionUpload {
  surveyKey: string;
  definition: Record<string, unknown>;
  bytes: number;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Survey keys end up in URL paths (…/surveys/{surveyKey}), so they follow the API's rule for keys. */
export function checkSurveyKey(key: unknown, name = "surveyDefinition.key"): string {
  if (typeof key !== "string" || key === "") throw new Invalid(`${name} must be a non-empty string`);
  if (key.length > 200) throw new Invalid(`${name} is longer than 200 characters`);
  if (!/^[^\s/?#]+$/.test(key)) throw new Invalid(`${name} must not contain spaces, '/', '?' or '#'`);
  return key;
}

/**
 * Reads an uploaded CASE Survey (the JSON case-editor-tools write: `{surveyDefinition: {key,
 * items…}, props?, availableFor?, …}`). Apart from the key it stays opaque: it must be storable
 * and at most 1 MiB, and the server's own fields (id, versionId, published, unpublished) are
 * dropped, because the server assigns them.
 *
 * @throws Invalid naming the field; SurveyDefinitionTooLarge (413) past the size limit.
 */
export function readSurveyDefinition(survey: unknown): SurveyDefinitionUpload {
  if (!isObject(survey)) {
    throw new Invalid("the survey must be a JSON object: a CASE Survey as case-editor-tools write it");
  }
  const group = survey["surveyDefinition"];
  if (!isObject(group)) {
    const current = survey["current"];
    if (isObject(current) && isObject(current["surveyDefinition"])) {
      throw new Invalid(
        "this is the older Survey format (current/history); upload the Survey of a current case-editor-tools, " +
          "with surveyDefinition at the top level",
      );
    }
    throw new Invalid("surveyDefinition must be an object: the survey's root item group, with its key");
  }
  const surveyKey = checkSurveyKey(group["key"]);
  const problem = jsonInputProblem(survey, "survey", {
    maxDepth: MAX_DEFINITION_DEPTH,
    tooDeep: `survey is nested deeper than ${MAX_DEFINITION_DEPTH} levels`,
    finiteNumbers: true,
  });
  if (problem) throw new Invalid(problem);
  const definition = Object.fromEntries(
    Object.entries(survey).filter(([field]) => !(SERVER_FIELDS as readonly string[]).includes(field)),
  );
  const bytes = Buffer.byteLength(JSON.stringify(definition), "utf8");
  if (bytes > MAX_SURVEY_DEFINITION_BYTES) throw new SurveyDefinitionTooLarge(bytes);
  return { surveyKey, definition, bytes };
}
