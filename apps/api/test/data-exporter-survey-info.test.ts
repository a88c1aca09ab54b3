import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, managementToken, researcher, setupStudy } from "./fixtures";
import { uploadSurvey } from "./survey-fixtures";
import { createTestApp, type TestApp } from "./test-app";

const text = (en: string, de: string) => [
  { code: "en", parts: [{ str: en }] },
  { code: "de", parts: [{ str: de }] },
];

/** A weekly survey with one single-choice question, labelled in English and German. */
function weeklySurvey(options: [string, string, string][]) {
  return {
    props: { name: text("Weekly", "Wöchentlich") },
    surveyDefinition: {
      key: "weekly",
      items: [
        {
          key: "weekly.Q1",
          components: {
            role: "root",
            items: [
              { role: "title", content: text("Any fever?", "Fieber?") },
              {
                key: "rg",
                role: "responseGroup",
                items: [
                  {
                    key: "scg",
                    role: "singleChoiceGroup",
                    items: options.map(([key, en, de]) => ({ key, role: "option", content: text(en, de) })),
                  },
                ],
              },
            ],
          },
        },
      ],
    },
  };
}

describe("data-exporter survey-info (CASE)", () => {
  let t: TestApp;
  let admin: string;
  let reader: { subject: string; token: string };
  const base = "/v1/studies/flu-watch/data-exporter/survey-info";

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "flu-watch" });
    await setupStudy(t, { key: "other" });
    admin = await managementToken(t, "root", true);
    reader = await researcher(t, "flu-watch", "read-study-config");
    await uploadSurvey(
      t,
      "flu-watch",
      admin,
      weeklySurvey([
        ["1", "yes", "ja"],
        ["2", "no", "nein"],
      ]),
    );
    await uploadSurvey(
      t,
      "flu-watch",
      admin,
      weeklySurvey([
        ["1", "yes", "ja"],
        ["2", "no", "nein"],
        ["3", "unsure", "unsicher"],
      ]),
    );
  });
  afterAll(async () => {
    await t.close();
  });

  const get = (path: string, token?: string) => t.app.request(path, { headers: token ? bearer(token) : {} });

  it("answers the codebook as CASE's JSON attachment, labels in the language asked for", async () => {
    const res = await get(`${base}?surveyKey=weekly&format=json&language=de&shortKeys=true`, reader.token);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("application/json; charset=utf-8");
    expect(res.headers.get("Content-Disposition")).toBe("attachment; filename=survey-infos_flu-watch_weekly.json");
    const body = (await res.json()) as {
      key: string;
      versions: {
        versionId: string;
        questions: { id: string; title: string; responses: { options: { label: string }[] }[] }[];
      }[];
    };
    expect(body.key).toBe("weekly");
    // every version, newest first; shortKeys drops the survey key prefix
    expect(body.versions).toHaveLength(2);
    const [newest, oldest] = body.versions;
    expect(newest!.questions[0]).toMatchObject({ id: "Q1", title: "Fieber?" });
    expect(newest!.questions[0]!.responses[0]!.options.map((o) => o.label)).toEqual(["ja", "nein", "unsicher"]);
    expect(oldest!.questions[0]!.responses[0]!.options.map((o) => o.label)).toEqual(["ja", "nein"]);
    expect(newest!.versionId).not.toBe(oldest!.versionId);
  });

  it("answers CSV with one row per option; defaults: json, English, full keys; both trailing-slash forms", async () => {
    const csv = await get(`${base}/?surveyKey=weekly&format=csv&shortKeys=false`, reader.token);
    expect(csv.status).toBe(200);
    expect(csv.headers.get("Content-Type")).toBe("text/csv");
    expect(csv.headers.get("Content-Disposition")).toBe("attachment; filename=survey-infos_flu-watch_weekly.csv");
    const lines = (await csv.text()).trimEnd().split("\n");
    expect(lines[0]).toBe("surveyKey,versionID,questionKey,title,responseKey,type,optionKey,optionType,optionLabel");
    expect(lines).toHaveLength(1 + 3 + 2);
    expect(lines[1]).toMatch(/^weekly,[^,]+,weekly\.Q1,Any fever\?,scg,single_choice,1,radio,yes$/);

    const byDefault = await get(`${base}?surveyKey=weekly`, admin);
    expect(byDefault.status).toBe(200);
    const body = (await byDefault.json()) as { versions: { questions: { id: string; title: string }[] }[] };
    expect(body.versions[0]!.questions[0]).toMatchObject({ id: "weekly.Q1", title: "Any fever?" });
  });

  it("400 naming the parameter: no surveyKey, an unknown survey, an unknown format, a bad shortKeys", async () => {
    const cases: [string, RegExp][] = [
      ["", /^surveyKey is required$/],
      ["?surveyKey=", /^surveyKey is required$/],
      ["?surveyKey=intake", /^surveyKey: no survey "intake" in study "flu-watch"$/],
      ["?surveyKey=weekly&format=xml", /format/],
      ["?surveyKey=weekly&shortKeys=maybe", /shortKeys/],
    ];
    for (const [query, message] of cases) {
      const res = await get(`${base}${query}`, reader.token);
      expect(res.status, query).toBe(400);
      expect((await res.json()).error).toMatch(message);
    }
  });

  it("401 without a token, 403 without read-study-config or on another study, 404 for an unknown study", async () => {
    expect((await get(`${base}?surveyKey=weekly`)).status).toBe(401);
    const responses = await researcher(t, "flu-watch", "get-responses");
    expect((await get(`${base}?surveyKey=weekly`, responses.token)).status).toBe(403);
    expect((await get("/v1/studies/other/data-exporter/survey-info?surveyKey=weekly", reader.token)).status).toBe(403);
    expect((await get("/v1/studies/nope/data-exporter/survey-info?surveyKey=weekly", admin)).status).toBe(404);
  });
});
