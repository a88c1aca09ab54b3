/**
 * Seeding for the export bench: a study, the weekly survey uploaded twice through the domain (so
 * its versions are real: server-assigned ids, the newer one current), participants, and N weekly
 * responses across N/10 participants (ten weeks each), built on the server with generate_series
 * and jsonb so that a million rows take minutes. Every answer is drawn from the row number through
 * hashint4, so two runs seed the same data.
 */
import type { DbHandle } from "@studyflow/db";
import { createStudy } from "@studyflow/domain/study-setup";
import { publishSurveyVersion } from "@studyflow/domain/surveys";
import { OPTIONS, SURVEY_KEY, weeklySurvey } from "./weekly-survey";

/** Rows per INSERT: large enough that a statement's set-up is noise, small enough to show progress. */
const SEED_BATCH = 50_000;
/** INSERTs run at once: the server builds the jsonb on one core per statement. */
const SEED_PARALLEL = 4;
/** Thursday 2023-11-16, the first week's submissions; week w is 7 days later per w. */
const FIRST_WEEK = 1_700_000_000;
const WEEK = 7 * 24 * 3600;

const list = (values: readonly string[]) => `array[${values.map((value) => `'${value}'`).join(",")}]::text[]`;

/** A number in [0, n) drawn from the row number i and a salt, the same on every run. */
const pick = (salt: number, n: number) => `((hashint4(i * 64 + ${salt})::bigint + 2147483648) % ${n})::int`;

/*
 * The builders below return SQL expressions of JSON *text*, parsed into jsonb once per row: nested
 * jsonb_build_object calls copy each level again and made the seeding three times slower. Every
 * value they splice in is digits, hex or a fixed word, so nothing needs JSON escaping.
 */

/** A JSON string of a SQL text expression. */
const quoted = (expression: string) => `'"' || ${expression} || '"'`;

/** The meta CASE clients record for each item: position, locale, when it was shown and answered. */
const meta = (position: number) => {
  const at = `(t - 600 + ${position * 30})`;
  return `'{"position": ${position}, "localeCode": "en", "rendered": [' || ${at} || '], "displayed": [' || ${at}
    || '], "responded": [' || (${at} + 12) || ']}'`;
};

/** One item's response: key, meta and the response tree under its response group "rg" (null: not answered). */
const item = (n: number, group: string | null) =>
  `'{"key": "${SURVEY_KEY}.Q${n}", "meta": ' || ${meta(n - 1)} ||
    ${group === null ? `'}'` : `', "response": {"key": "rg", "items": [' || ${group} || ']}}'`}`;

/** A response group component `{key, items: [...]}` of the given items (a text expression of the list inside []). */
const group = (key: string, items: string) => `'{"key": "${key}", "items": [' || ${items} || ']}'`;

/** A choice among options: `{"key": option}`. */
const choose = (salt: number, options: readonly string[]) =>
  `'{"key": ' || ${quoted(`(${list(options)})[${pick(salt, options.length)} + 1]`)} || '}'`;

/** A value slot `{"key", "dtype"?, "value"}`. */
const value = (key: string, dtype: string | null, expression: string) =>
  `'{"key": "${key}"${dtype ? `, "dtype": "${dtype}"` : ""}, "value": ' || ${quoted(expression)} || '}'`;

/** Each option selected with probability 1/3 (none selected happens, as in real data), comma separated. */
const chooseSome = (salt: number, options: readonly string[]) =>
  `coalesce(concat_ws(', ', ${options
    .map((key, n) => `case when ${pick(salt + n, 3)} = 0 then '{"key": "${key}"}' end`)
    .join(", ")}), '')`;

/** The `responses` array of row i (t: its submission time; v2: whether it answers version 2). */
const responsesSql = `('[' || ${[
  item(
    1,
    group(
      "scg",
      `case when ${pick(1, 20)} = 0 then ${value("other", null, `'feeling ' || substr(md5(i::text), 1, 10)`)}
        else ${choose(2, OPTIONS.q1)} end`,
    ),
  ),
  item(
    2,
    group(
      "mcg",
      `concat_ws(', ', nullif(${chooseSome(10, OPTIONS.q2)}, ''),
        case when v2 and ${pick(19, 3)} = 0 then '{"key": "${OPTIONS.q2v2}"}' end)`,
    ),
  ),
  item(3, value("num", "number", `round(36 + ${pick(3, 50)} / 10.0, 1)::text`)),
  item(4, value("date", "date", `(t - ${pick(4, 14)} * 86400)::text`)),
  // The free text is answered three times in ten; an item left open has no response.
  `case when ${pick(5, 10)} < 3 then ${item(
    5,
    value(
      "text",
      null,
      `'Slept badly on ' || to_char(to_timestamp(t), 'FMDay') || ', headache since ' || substr(md5(i::text), 1, 8)
        || repeat(' and more', ${pick(6, 8)})`,
    ),
  )} else ${item(5, null)} end`,
  item(
    6,
    group(
      "rsca",
      OPTIONS.q6Rows.map((row, index) => group(row, choose(20 + index, OPTIONS.q6Scale))).join(" || ', ' || "),
    ),
  ),
  item(7, group("scg", choose(7, OPTIONS.q7))),
  item(
    8,
    group(
      "mcg",
      `concat_ws(', ', nullif(${chooseSome(30, OPTIONS.q8)}, ''),
        case when ${pick(8, 10)} = 0 then ${value("other", null, `'tea with ' || substr(md5(i::text), 3, 6)`)} end)`,
    ),
  ),
  item(9, group("scg", choose(9, OPTIONS.q9))),
  item(10, value("num", "number", `${pick(11, 8)}::text`)),
].join(" || ', ' || ")} || ']')::jsonb`;

/**
 * Inserts the responses of rows $5..$6 of study $1 ($2 participants; $3, $4: the version ids).
 * Week w = i / participants; weeks 5 and later answer version 2.
 */
export const insertResponses = `
  insert into survey_responses (study_key, participant_id, key, version_id, opened_at, submitted_at, arrived_at,
                                responses, context)
  select $1, 'p' || lpad((i % $2)::text, 9, '0'), '${SURVEY_KEY}', case when v2 then $4 else $3 end,
    t - 600, t, t + 2, ${responsesSql},
    jsonb_build_object('engineVersion', '1.4.2', 'language', 'en', 'session', substr(md5((i % $2)::text || (i / $2)), 1, 16),
      'platform', (${list(["web", "ios", "android"])})[${pick(12, 3)} + 1])
  from (
    select i, ${FIRST_WEEK} + (i / $2) * ${WEEK} + (i % $2) % 86400 as t, i / $2 >= 5 as v2
    from generate_series($5::int, $6::int) as i
  ) as rows`;

export interface SeededExportStudy {
  studyKey: string;
  surveyKey: string;
  /** The uploaded versions, oldest first; the first half of the weeks answer the first. */
  versionIds: [string, string];
  responses: number;
  participants: number;
}

/**
 * Creates the study, uploads both survey versions through the domain, and inserts the participants
 * and `count` responses (ten weeks of N/10 participants; weeks 0–4 answer version 1, 5–9 version 2).
 */
export async function seedExportStudy(
  db: DbHandle,
  studyKey: string,
  count: number,
  onProgress: (seeded: number) => void = () => undefined,
): Promise<SeededExportStudy> {
  await createStudy(db.db, { key: studyKey });
  const clock = { clock: Date.now };
  const v1 = await publishSurveyVersion(db.db, { studyKey, actor: "bench", survey: weeklySurvey(1) }, clock);
  // Version ids carry the upload time; a moment between the uploads keeps them in order.
  await new Promise((resolve) => setTimeout(resolve, 5));
  const v2 = await publishSurveyVersion(db.db, { studyKey, actor: "bench", survey: weeklySurvey(2) }, clock);

  const participants = Math.max(1, Math.ceil(count / 10));
  await db.sql`
    insert into participants (study_key, participant_id, study_status, entered_at, modified_at, flags)
    select ${studyKey}, 'p' || lpad(p::text, 9, '0'), 'active', ${FIRST_WEEK - WEEK}, ${FIRST_WEEK},
      jsonb_build_object('group', 'g' || (p % 10))
    from generate_series(0, ${participants - 1}) as p`;

  const statement = insertResponses;
  let seeded = 0;
  const batches: [number, number][] = [];
  for (let start = 0; start < count; start += SEED_BATCH)
    batches.push([start, Math.min(count, start + SEED_BATCH) - 1]);
  const runNext = async (): Promise<void> => {
    const batch = batches.shift();
    if (!batch) return;
    const result = await db.sql.unsafe(statement, [
      studyKey,
      participants,
      v1.versionId,
      v2.versionId,
      batch[0],
      batch[1],
    ]);
    seeded += result.count;
    onProgress(seeded);
    return runNext();
  };
  await Promise.all(Array.from({ length: SEED_PARALLEL }, runNext));
  await db.sql`vacuum analyze survey_responses`;
  await db.sql`vacuum analyze participants`;
  return { studyKey, surveyKey: SURVEY_KEY, versionIds: [v1.versionId, v2.versionId], responses: seeded, participants };
}
