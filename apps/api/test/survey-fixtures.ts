import type { TestApp } from "./test-app";
import { postJson } from "./fixtures";

/** A localized text as the CASE survey engine writes it. */
const text = (en: string, de: string) => [
  { code: "en", parts: [{ str: en }] },
  { code: "de", parts: [{ str: de }] },
];

/** One single-choice question, shaped as case-editor-tools emit it (components, response group, validation). */
function singleChoice(surveyKey: string, itemKey: string, title: string, options: string[]) {
  const key = `${surveyKey}.${itemKey}`;
  return {
    key,
    components: {
      role: "root",
      items: [
        { role: "title", content: text(title, title) },
        {
          key: "rg",
          role: "responseGroup",
          items: [
            {
              key: "scg",
              role: "singleChoiceGroup",
              items: options.map((option, index) => ({
                key: String(index + 1),
                role: "option",
                content: text(option, option),
              })),
            },
          ],
        },
      ],
    },
    validations: [
      {
        key: "r1",
        type: "hard",
        rule: { name: "hasResponse", data: [{ str: key }, { str: "rg" }] },
      },
    ],
  };
}

/**
 * A CASE Survey as case-editor-tools write it (`survey.getSurveyJSON()`): props, availableFor,
 * the root item group under surveyDefinition, and the client-side fields the server overrides.
 */
export function caseSurvey(surveyKey: string, extra: Record<string, unknown> = {}) {
  return {
    id: "client-id",
    versionId: "client-version",
    published: 1_600_000_000,
    props: {
      name: text(`${surveyKey} survey`, `${surveyKey} Fragebogen`),
      description: text("A few questions", "Ein paar Fragen"),
      typicalDuration: text("5 minutes", "5 Minuten"),
    },
    availableFor: "active_participants",
    requireLoginBeforeSubmission: true,
    maxItemsPerPage: { large: 1, small: 1 },
    metadata: { generatedBy: "case-editor-tools" },
    surveyDefinition: {
      key: surveyKey,
      items: [
        singleChoice(surveyKey, "Q1", "How old are you?", ["<18", "18-64", "65+"]),
        singleChoice(surveyKey, "Q2", "Do you have symptoms?", ["yes", "no"]),
        { key: `${surveyKey}.pb1`, type: "pageBreak" },
        singleChoice(surveyKey, "Q3", "Have you been vaccinated?", ["yes", "no", "don't know"]),
      ],
    },
    ...extra,
  };
}

/** A response to caseSurvey's first question, as the survey engine submits it. */
export function caseResponse(surveyKey: string, versionId: string | undefined, choice = "2") {
  return {
    key: surveyKey,
    ...(versionId === undefined ? {} : { versionId }),
    openedAt: 1_780_000_000,
    submittedAt: 1_780_000_100,
    responses: [
      {
        key: `${surveyKey}.Q1`,
        meta: { position: 0, rendered: [1_780_000_010], displayed: [1_780_000_010], responded: [1_780_000_050] },
        response: { key: "rg", items: [{ key: "scg", items: [{ key: choice }] }] },
      },
    ],
    context: { engineVersion: "1.2.0", language: "en" },
  };
}

/** Uploads a survey version (the first, too) through the management API and returns its version id. */
export async function uploadSurvey(t: TestApp, studyKey: string, token: string, survey: unknown): Promise<string> {
  const key = (survey as { surveyDefinition?: { key?: unknown } }).surveyDefinition?.key;
  const res = await postJson(t, `/v1/studies/${studyKey}/surveys/${String(key)}`, survey, token);
  if (res.status !== 200) throw new Error(`upload failed: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { survey: { versionId: string } };
  return body.survey.versionId;
}
