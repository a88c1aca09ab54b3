import { describe, expect, it } from "vitest";
import { surveyInfo } from "../src";
import { readCsv } from "./csv-reader";
import { intake, weeklyV1, weeklyV2 } from "./surveys";

const HEADER = "surveyKey,versionID,questionKey,title,responseKey,type,optionKey,optionType,optionLabel";

describe("survey info (codebook)", () => {
  it("CSV: one line per option, or per slot without options; newest version first", () => {
    const file = surveyInfo("weekly", [weeklyV1, weeklyV2], {
      language: "en",
      shortKeys: false,
      format: "csv",
      studyKey: "flu",
    });
    expect(file.contentType).toBe("text/csv");
    expect(file.fileName).toBe("survey-infos_flu_weekly.csv");
    const q1 = "weekly,w2,weekly.Q1,Which symptoms did you have?,mcg,multiple_choice";
    const q2 = "weekly,w2,weekly.Q2,Did you see a doctor?,scg,single_choice";
    expect(file.text).toBe(
      [
        HEADER,
        `${q1},0,checkbox,No symptoms`,
        `${q1},1,checkbox,Fever`,
        `${q1},2,checkbox,Cough`,
        `${q1},4,checkbox,Headache`,
        `${q2},yes,radio,Yes`,
        `${q2},no,radio,No`,
        `${q2},other,text,Something else`,
        "weekly,w2,weekly.Q4,Highest temperature,num,number,,,",
        "weekly,w2,weekly.G1.Q1,Anything else?,txt,text,,,",
        ...["0,checkbox,No symptoms", "1,checkbox,Fever", "2,checkbox,Cough", "3,text,Other"].map(
          (o) => `weekly,w1,weekly.Q1,Which symptoms did you have?,mcg,multiple_choice,${o}`,
        ),
        "weekly,w1,weekly.Q2,Did you see a doctor?,scg,single_choice,yes,radio,Yes",
        "weekly,w1,weekly.Q2,Did you see a doctor?,scg,single_choice,no,radio,No",
        "weekly,w1,weekly.Q2,Did you see a doctor?,scg,single_choice,other,text,Something else",
        "weekly,w1,weekly.Q3,When did the symptoms start?,date,date,,,",
        "",
      ].join("\n"),
    );
  });

  it("labels in another language, empty where a text has no translation", () => {
    const file = surveyInfo("weekly", [weeklyV1, weeklyV2], { language: "de", shortKeys: true, format: "csv" });
    expect(file.fileName).toBe("survey-infos_weekly.csv");
    const lines = readCsv(file.text);
    // version 2's title has no German text; version 1's has
    expect(lines[1]).toEqual(["weekly", "w2", "Q1", "", "mcg", "multiple_choice", "0", "checkbox", "Keine Symptome"]);
    expect(lines.find((l) => l[1] === "w2" && l[6] === "4")![8]).toBe("");
    expect(lines.find((l) => l[1] === "w1" && l[6] === "1")).toEqual([
      "weekly",
      "w1",
      "Q1",
      "Welche Symptome hatten Sie?",
      "mcg",
      "multiple_choice",
      "1",
      "checkbox",
      "Fieber",
    ]);
  });

  it("a missing language leaves every title and label empty", () => {
    const lines = readCsv(surveyInfo("weekly", [weeklyV2], { language: "fr", shortKeys: false, format: "csv" }).text);
    for (const l of lines.slice(1)) {
      expect(l[3]).toBe("");
      expect(l[8]).toBe("");
    }
  });

  it("JSON: CASE's structs in field order, null options where a slot has none", () => {
    const file = surveyInfo("weekly", [weeklyV2], { language: "en", shortKeys: true, format: "json", studyKey: "flu" });
    expect(file.contentType).toBe("application/json; charset=utf-8");
    expect(file.fileName).toBe("survey-infos_flu_weekly.json");
    expect(
      file.text.startsWith('{"key":"weekly","versions":[{"versionId":"w2","published":1710000000,"unpublished":0,'),
    ).toBe(true);
    expect(file.text).toContain(
      '{"id":"Q4","title":"Highest temperature","questionType":"number","responses":[{"id":"num","responseType":"number","label":"°C","options":null}]}',
    );
    expect(file.text).toContain('{"id":"4","optionType":"checkbox","label":"Headache"}');
    const parsed = JSON.parse(file.text) as { versions: { questions: { id: string }[] }[] };
    expect(parsed.versions[0]!.questions.map((q) => q.id)).toEqual(["Q1", "Q2", "Q4", "G1.Q1"]);
  });

  it("JSON of a survey without versions lists null, as CASE's nil slice", () => {
    expect(surveyInfo("weekly", [], { language: "en", shortKeys: false, format: "json" }).text).toBe(
      '{"key":"weekly","versions":null}',
    );
  });

  it("describes every item kind with CASE's types and option types", () => {
    const parsed = JSON.parse(
      surveyInfo("intake", [intake], { language: "en", shortKeys: true, format: "json" }).text,
    ) as {
      versions: {
        questions: {
          id: string;
          questionType: string;
          responses: {
            id: string;
            responseType: string;
            label: string;
            options: { id: string; optionType: string; label: string }[] | null;
          }[];
        }[];
      }[];
    };
    const q = Object.fromEntries(parsed.versions[0]!.questions.map((x) => [x.id, x]));
    expect(Object.fromEntries(Object.entries(q).map(([k, x]) => [k, x.questionType]))).toEqual({
      Q1: "single_choice",
      Q2: "multiple_choice",
      Q3: "text",
      Q4: "number",
      Q5: "date",
      Q6: "text",
      Q7: "dropdown",
      Q8: "slider",
      Q9: "matrix",
      Q10: "likert",
      Q11: "likert_group",
      Q12: "responsive_single_choice_array",
      Q13: "responsive_bipolar_likert_array",
      Q14: "responsive_table",
      Q15: "consent",
      Q16: "cloze",
      Q17: "number",
      Q18: "text",
      Q19: "eq5d_slider",
      Q20: "text",
      Q21: "unknown",
      Q22: "unknown",
      "G.Q1": "text",
    });
    expect(q["Q1"]!.responses[0]!.options!.map((o) => [o.id, o.optionType, o.label])).toEqual([
      ["1", "radio", "One"],
      ["2", "text", "Text"],
      ["3", "number", "Number"],
      ["4", "date", "Date"],
      ["5", "cloze", "I amnameage"],
      ["5.txt", "embedded_cloze_text", "name"],
      ["5.num", "embedded_cloze_number", "age"],
      ["5.dd", "embedded_cloze_dropdown", "XY"],
    ]);
    expect(q["Q9"]!.responses.map((s) => [s.id, s.responseType, s.label])).toEqual([
      ["mat.r1.dd", "matrix_dropdown", ""],
      ["mat.r1.in", "matrix_input", "Input"],
      ["mat.r1.chk", "matrix_checkbox", ""],
      ["mat.r1.num", "matrix_number_input", "Num"],
      ["mat.r2", "matrix_radio_row", "Row 2"],
    ]);
    expect(q["Q13"]!.responses[0]).toMatchObject({
      label: "Calm vs. Nervous",
      options: [{ label: "1" }, { label: "2" }, { label: "3" }],
    });
    expect(q["Q14"]!.responses.map((s) => [s.id, s.label])).toEqual([
      ["a-c1", "A || Col 1"],
      ["a-c2", "A || Col 2"],
      ["b-c1", "B || Col 1"],
      ["b-c2", "B || Col 2"],
    ]);
    expect(q["Q11"]!.responses[0]!.options![0]).toEqual({ id: "1", optionType: "radio", label: "" });
    expect(q["Q20"]!.responses.map((s) => s.id)).toEqual([
      "contact.name",
      "contact.mail",
      "contact.street",
      "contact.street2",
      "contact.city",
      "contact.postalCode",
      "contact.country",
    ]);
    expect(q["Q16"]!.responses[0]!.options!.map((o) => o.optionType)).toEqual(["text", "number", "dropdown"]);
  });
});
