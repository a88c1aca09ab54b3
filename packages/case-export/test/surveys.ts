/**
 * Test surveys: a weekly symptoms survey in two versions (an option added, one removed, a question
 * dropped, a question and a group added) and an intake survey with every item kind CASE exports.
 */
import type { ExportResponse, SurveyVersionInput } from "../src";
import { answer, comp, display, group, option, question, r, upload, v, type Json } from "./survey-builders";

const symptoms = (extra: Json[]): Json =>
  comp("multipleChoiceGroup", "mcg", undefined, [
    option("0", "No symptoms", "Keine Symptome"),
    option("1", "Fever", "Fieber"),
    option("2", "Cough", "Husten"),
    ...extra,
  ]);

export const weeklyV1: SurveyVersionInput = {
  versionId: "w1",
  publishedAt: 1_700_000_000,
  unpublishedAt: null,
  definition: upload("weekly", [
    display("weekly.intro", "Please tell us how you were this week."),
    question("weekly.Q1", { en: "Which symptoms did you have?", de: "Welche Symptome hatten Sie?" }, [
      symptoms([comp("input", "3", { en: "Other" })]),
    ]),
    { key: "weekly.pb1", type: "pageBreak" },
    question("weekly.Q2", { en: "Did you see a doctor?" }, [
      comp("singleChoiceGroup", "scg", undefined, [
        option("yes", "Yes"),
        option("no", "No"),
        comp("input", "other", { en: "Something else" }),
      ]),
    ]),
    question("weekly.Q3", { en: "When did the symptoms start?" }, [comp("dateInput", "date", { en: "Date" })]),
  ]),
};

export const weeklyV2: SurveyVersionInput = {
  versionId: "w2",
  publishedAt: 1_710_000_000,
  unpublishedAt: null,
  definition: upload("weekly", [
    display("weekly.intro", "Please tell us how you were this week."),
    question("weekly.Q1", { en: "Which symptoms did you have?" }, [symptoms([option("4", "Headache")])]),
    question("weekly.Q2", { en: "Did you see a doctor?" }, [
      comp("singleChoiceGroup", "scg", undefined, [
        option("yes", "Yes"),
        option("no", "No"),
        comp("input", "other", { en: "Something else" }),
      ]),
    ]),
    question("weekly.Q4", { en: "Highest temperature" }, [comp("numberInput", "num", { en: "°C" })]),
    group("weekly.G1", [
      question("weekly.G1.Q1", { en: "Anything else?" }, [comp("multilineTextInput", "txt", { en: "Notes" })]),
    ]),
    { key: "weekly.end", type: "surveyEnd" },
  ]),
};

const rows = (keys: string[]): Json[] => keys.map((k) => comp("row", k, { en: "Row " + k }));

export const intake: SurveyVersionInput = {
  versionId: "i1",
  publishedAt: 1_690_000_000,
  unpublishedAt: null,
  definition: upload("intake", [
    display("intake.info", "Welcome"),
    question("intake.Q1", { en: "Single choice" }, [
      comp("singleChoiceGroup", "scg", undefined, [
        option("1", "One"),
        comp("input", "2", { en: "Text" }),
        comp("numberInput", "3", { en: "Number" }),
        comp("dateInput", "4", { en: "Date" }),
        comp("cloze", "5", undefined, [
          comp("text", "t", { en: "I am" }),
          comp("input", "txt", { en: "name" }),
          comp("numberInput", "num", { en: "age" }),
          comp("dropDownGroup", "dd", undefined, [option("x", "X"), option("y", "Y")]),
        ]),
      ]),
    ]),
    question("intake.Q2", { en: "Multiple choice" }, [
      comp("multipleChoiceGroup", "mcg", undefined, [
        option("1", "One"),
        comp("input", "2", { en: "Other" }),
        comp("cloze", "3", undefined, [comp("input", "txt", { en: "inner" })]),
        comp("timeInput", "4", { en: "Time" }),
      ]),
    ]),
    question("intake.Q3", { en: "Text" }, [comp("input", "inp", { en: "Your answer" })]),
    question("intake.Q4", { en: "Number" }, [comp("numberInput", "num", { en: "n" })]),
    question("intake.Q5", { en: "Date" }, [comp("dateInput", "date", { en: "d" })]),
    question("intake.Q6", { en: "Multiline" }, [comp("multilineTextInput", "ml", { en: "m" })]),
    question("intake.Q7", { en: "Dropdown" }, [
      comp("dropDownGroup", "ddg", undefined, [option("a", "A"), option("b", "B")]),
    ]),
    question("intake.Q8", { en: "Slider" }, [comp("sliderNumeric", "slider", { en: "s" })]),
    question("intake.Q9", { en: "Matrix" }, [
      comp("matrix", "mat", undefined, [
        comp("responseRow", "r1", undefined, [
          comp("label", "l", { en: "Row 1" }),
          comp("dropDownGroup", "dd", undefined, [option("1", "One"), option("2", "Two")]),
          comp("input", "in", { en: "Input" }),
          comp("check", "chk"),
          comp("numberInput", "num", { en: "Num" }),
        ]),
        comp("radioRow", "r2", undefined, [
          comp("label", "l", { en: "Row 2" }),
          option("o1", "O1"),
          option("o2", "O2"),
        ]),
      ]),
    ]),
    question("intake.Q10", { en: "Likert" }, [
      comp("likert", "lik", undefined, [option("1", "Bad"), option("2", "OK"), option("3", "Good")]),
    ]),
    question("intake.Q11", { en: "Likert group" }, [
      comp("likertGroup", "lg", undefined, [
        comp("text", "h1", { en: "Sleep" }),
        comp("likert", "cat1", undefined, [option("1", "1"), option("2", "2"), option("3", "3")]),
        comp("text", "h2", { en: "Mood" }),
        comp("likert", "cat2", undefined, [option("1", "1"), option("2", "2"), option("3", "3")]),
      ]),
    ]),
    question("intake.Q12", { en: "Responsive single choice array" }, [
      comp("responsiveSingleChoiceArray", "rsca", undefined, [
        comp("options", "options", undefined, [
          option("o1", "Never"),
          option("o2", "Sometimes"),
          option("o3", "Often"),
        ]),
        ...rows(["row1", "row2"]),
      ]),
    ]),
    question("intake.Q13", { en: "Bipolar" }, [
      comp("responsiveBipolarLikertScaleArray", "rbl", undefined, [
        comp("options", "options", undefined, [option("1", "1"), option("2", "2"), option("3", "3")]),
        comp("row", "r1", undefined, [comp("start", "s", { en: "Calm" }), comp("end", "e", { en: "Nervous" })]),
      ]),
    ]),
    question("intake.Q14", { en: "Responsive table" }, [
      comp("responsiveMatrix", "rm", undefined, [
        comp("columns", "columns", undefined, [
          comp("column", "c1", { en: "Col 1" }),
          comp("column", "c2", { en: "Col 2" }),
        ]),
        comp("rows", "rows", undefined, [
          comp("category", "cat", { en: "Category" }),
          comp("row", "a", { en: "A" }),
          comp("row", "b", { en: "B" }),
        ]),
      ]),
    ]),
    question("intake.Q15", { en: "Consent" }, [comp("consent", "consent", { en: "I agree" })]),
    question("intake.Q16", { en: "Cloze" }, [
      comp("cloze", "cloze", undefined, [
        comp("text", "t1", { en: "My name is" }),
        comp("input", "name", { en: "name" }),
        comp("numberInput", "age", { en: "age" }),
        comp("dropDownGroup", "unit", undefined, [option("d", "days"), option("w", "weeks")]),
      ]),
    ]),
    question("intake.Q17", { en: "Time" }, [comp("timeInput", "time", { en: "t" })]),
    question("intake.Q18", { en: "Code" }, [comp("validatedRandomQuestion", "vrq", { en: "code" })]),
    question("intake.Q19", { en: "EQ-5D" }, [comp("eq5d-health-indicator", "eq5d")]),
    question("intake.Q20", { en: "Contact" }, [
      comp("contact", "contact", undefined, [
        comp("fullName", "name", { en: "Name" }),
        comp("email", "mail", { en: "E-mail" }),
        comp("address", "addr", { en: "Address" }),
      ]),
    ]),
    question("intake.Q21", { en: "Mixed" }, [
      comp("singleChoiceGroup", "scg", undefined, [option("1", "One")]),
      comp("input", "inp", { en: "Other" }),
    ]),
    question("intake.Q22", { en: "Custom widget" }, [comp("customWidget:v2", "w")]),
    group("intake.G", [question("intake.G.Q1", { en: "In a group" }, [comp("input", "inp", { en: "x" })])]),
    {
      ...question("intake.conf", { en: "Your e-mail" }, [comp("input", "mail", { en: "e-mail" })]),
      confidentialMode: "replace",
    },
    { key: "intake.end", type: "surveyEnd" },
  ]),
};

/** Every column the intake survey exports, in CASE's (byte) order, with separator "-". */
export const intakeResponseColumns = [
  "intake.G.Q1",
  "intake.Q1",
  "intake.Q1-2",
  "intake.Q1-3",
  "intake.Q1-4",
  "intake.Q1-5.dd",
  "intake.Q1-5.num",
  "intake.Q1-5.txt",
  "intake.Q10",
  "intake.Q11-cat1",
  "intake.Q11-cat2",
  "intake.Q12-row1",
  "intake.Q12-row2",
  "intake.Q13-r1",
  "intake.Q14-a-c1",
  "intake.Q14-a-c2",
  "intake.Q14-b-c1",
  "intake.Q14-b-c2",
  "intake.Q15",
  "intake.Q16-age",
  "intake.Q16-name",
  "intake.Q16-unit",
  "intake.Q17",
  "intake.Q18",
  "intake.Q19",
  "intake.Q2-1",
  "intake.Q2-2",
  "intake.Q2-2-open",
  "intake.Q2-3",
  "intake.Q2-3.txt",
  "intake.Q2-4",
  "intake.Q2-4-open",
  "intake.Q20-contact.city",
  "intake.Q20-contact.country",
  "intake.Q20-contact.mail",
  "intake.Q20-contact.name",
  "intake.Q20-contact.postalCode",
  "intake.Q20-contact.street",
  "intake.Q20-contact.street2",
  "intake.Q21-inp",
  "intake.Q21-scg",
  "intake.Q22-w",
  "intake.Q3",
  "intake.Q4",
  "intake.Q5",
  "intake.Q6",
  "intake.Q7",
  "intake.Q8",
  "intake.Q9-mat.r1.chk",
  "intake.Q9-mat.r1.dd",
  "intake.Q9-mat.r1.in",
  "intake.Q9-mat.r1.num",
  "intake.Q9-mat.r2",
];

/** A full intake submission, as the survey engine sends it. */
export const intakeAnswers: unknown[] = [
  answer("intake.info", null),
  answer("intake.Q1", [r("scg", [r("5", [v("txt", "Ann"), v("num", "33", "number"), r("dd", [r("y")])])])], {
    position: 1,
    rendered: [1700000000, 1700000050],
    displayed: [1700000001],
    responded: [1700000010, 1700000020],
  }),
  answer("intake.Q2", [r("mcg", [r("1"), v("2", "my own words"), r("3", [v("txt", "inner text")])])], { position: 2 }),
  answer("intake.Q3", [v("inp", " free text, with comma")]),
  answer("intake.Q4", [v("num", "42", "number")]),
  answer("intake.Q5", [v("date", "1699920000", "date")]),
  answer("intake.Q6", [v("ml", 'first line\r\nsecond "quoted"\nthird')]),
  answer("intake.Q7", [r("ddg", [r("b")])]),
  answer("intake.Q8", [v("slider", "7")]),
  answer("intake.Q9", [
    r("mat", [r("r1", [r("dd", [r("2")]), v("in", "cell text"), v("chk", "true"), v("num", "5")]), r("r2", [r("o2")])]),
  ]),
  answer("intake.Q10", [r("lik", [r("3")])]),
  answer("intake.Q11", [r("lg", [r("cat1", [r("1")]), r("cat2", [r("3")])])]),
  answer("intake.Q12", [r("rsca", [r("row1", [r("o2")])])]),
  answer("intake.Q13", [r("rbl", [r("r1", [r("2")])])]),
  answer("intake.Q14", [r("rm", [v("a-c1", "x"), v("b-c2", "y")])]),
  answer("intake.Q15", [v("consent", "true")]),
  answer("intake.Q16", [r("cloze", [v("name", "Ann"), v("age", "30"), r("unit", [r("w")])])]),
  answer("intake.Q17", [v("time", "3600")]),
  answer("intake.Q18", [v("vrq", "K7-93")]),
  answer("intake.Q19", [v("eq5d", "80")]),
  answer("intake.Q20", [r("contact", [v("name", "Ann Example"), v("city", "Utrecht")])]),
  answer("intake.Q21", [r("scg", [r("1")]), v("inp", "<b>&</b>")]),
  answer("intake.Q22", [v("w", "widget value")]),
  answer("intake.G.Q1", [v("inp", "grouped")]),
];

export function response(overrides: Partial<ExportResponse> & Pick<ExportResponse, "responses">): ExportResponse {
  return {
    id: "resp-1",
    participantId: "p-1",
    key: "intake",
    versionId: "i1",
    openedAt: 1700000000,
    submittedAt: 1700000100,
    arrivedAt: 1700000101,
    context: { language: "en", engineVersion: "1.2.0", session: "s-9" },
    ...overrides,
  };
}
