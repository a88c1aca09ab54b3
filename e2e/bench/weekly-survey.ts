/**
 * The export bench's survey: a weekly symptoms questionnaire in the shape case-editor-tools write
 * (a CASE Survey with `surveyDefinition` at the top level), with the answer types studies use
 * every week. Its 10 questions give 31 answer columns in the wide export:
 *
 *   Q1  single choice (5 options and an "other" with a text input)   2 columns
 *   Q2  multiple choice, 8 symptoms                                   8
 *   Q3  number input (temperature)                                    1
 *   Q4  date input (symptom onset)                                    1
 *   Q5  free text (multiline)                                         1
 *   Q6  likert block, 8 rows of a 5-point scale                       8
 *   Q7  single choice yes / no / don't know                           1
 *   Q8  multiple choice, 5 measures and an "other" with a text input  7 (6 options, 1 open field)
 *   Q9  single choice, 4 options                                      1
 *   Q10 number input (days off work)                                  1
 *                                                                     ---
 *                                                                     31
 *
 * Version 2 adds a ninth symptom to Q2,
 * so an export that spans both versions meets a column that only the newer rows fill.
 */

type Localised = { code: string; parts: { dtype: "str"; str: string }[] }[];

const text = (value: string): Localised => [{ code: "en", parts: [{ dtype: "str", str: value }] }];

interface Component {
  role: string;
  key?: string;
  content?: Localised;
  items?: Component[];
  dtype?: string;
  properties?: Record<string, unknown>;
}

const option = (key: string, label: string, role = "option"): Component => ({ role, key, content: text(label) });

function question(key: string, title: string, responseComponent: Component) {
  return {
    key,
    components: {
      role: "root",
      items: [
        { role: "title", content: text(title) },
        { role: "responseGroup", key: "rg", items: [responseComponent] },
      ],
    },
    validations: [],
  };
}

export const SURVEY_KEY = "weekly";
const q = (n: number) => `${SURVEY_KEY}.Q${n}`;

/** Option keys of each question; the seeding draws answers from these, so both stay in step. */
export const OPTIONS = {
  q1: ["0", "1", "2", "3", "4"],
  q2: ["fever", "chills", "cough", "sore-throat", "headache", "fatigue", "nausea", "rash"],
  /** The symptom version 2 adds to Q2. */
  q2v2: "loss-of-smell",
  q6Rows: ["r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8"],
  q6Scale: ["1", "2", "3", "4", "5"],
  q7: ["yes", "no", "dk"],
  q8: ["rest", "medication", "doctor", "test", "isolation"],
  q9: ["a", "b", "c", "d"],
} as const;

/** The CASE Survey of the given version (1 or 2), as a study would upload it. */
export function weeklySurvey(version: 1 | 2) {
  const symptoms = version === 2 ? [...OPTIONS.q2, OPTIONS.q2v2] : [...OPTIONS.q2];
  return {
    props: { name: text("Weekly symptoms"), description: text("How were you this week?") },
    availableFor: "active_participants",
    surveyDefinition: {
      key: SURVEY_KEY,
      items: [
        question(q(1), "How do you feel today?", {
          role: "singleChoiceGroup",
          key: "scg",
          items: [...OPTIONS.q1.map((key) => option(key, `Level ${key}`)), option("other", "Other", "input")],
        }),
        question(q(2), "Which symptoms did you have?", {
          role: "multipleChoiceGroup",
          key: "mcg",
          items: symptoms.map((key) => option(key, key)),
        }),
        question(q(3), "Your highest temperature", {
          role: "numberInput",
          key: "num",
          dtype: "number",
          properties: { min: { dtype: "num", num: 34 }, max: { dtype: "num", num: 43 } },
        }),
        question(q(4), "When did the symptoms start?", { role: "dateInput", key: "date", dtype: "date" }),
        question(q(5), "Anything else?", { role: "multilineTextInput", key: "text" }),
        question(q(6), "How much do you agree?", {
          role: "responsiveSingleChoiceArray",
          key: "rsca",
          items: [
            { role: "options", items: OPTIONS.q6Scale.map((key) => option(key, `Scale ${key}`)) },
            ...OPTIONS.q6Rows.map((key) => ({ role: "row", key, content: text(`Statement ${key}`) })),
          ],
        }),
        question(q(7), "Did you see a doctor?", {
          role: "singleChoiceGroup",
          key: "scg",
          items: OPTIONS.q7.map((key) => option(key, key)),
        }),
        question(q(8), "What did you do?", {
          role: "multipleChoiceGroup",
          key: "mcg",
          items: [...OPTIONS.q8.map((key) => option(key, key)), option("other", "Other", "input")],
        }),
        question(q(9), "How did you travel?", {
          role: "singleChoiceGroup",
          key: "scg",
          items: OPTIONS.q9.map((key) => option(key, key)),
        }),
        question(q(10), "Days off work", { role: "numberInput", key: "num", dtype: "number" }),
        { key: `${SURVEY_KEY}.end`, type: "surveyEnd", components: { role: "root", items: [] } },
      ],
    },
  };
}
