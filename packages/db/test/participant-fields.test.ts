import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  JSON_PARTICIPANT_FIELDS,
  PARTICIPANT_FIELD_COLUMNS,
  PARTICIPANT_FIELD_NAMES,
  WRITABLE_PARTICIPANT_FIELDS,
  participants,
  pickParticipantFields,
  type ParticipantFieldName,
} from "@studyflow/db";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

describe("the participant field table", () => {
  it("names the drizzle table's columns, with their SQL types, under the same keys", () => {
    for (const field of PARTICIPANT_FIELD_NAMES) {
      const { column, sqlType } = PARTICIPANT_FIELD_COLUMNS[field];
      expect(participants[field].name, field).toBe(column);
      expect(participants[field].getSQLType(), field).toBe(sqlType);
      expect(participants[field].notNull, field).toBe(true);
    }
  });

  it("matches the migrated database", async () => {
    const rows = await database.sql<{ column_name: string; data_type: string; is_nullable: string }[]>`
      select column_name, data_type, is_nullable from information_schema.columns
      where table_schema = 'public' and table_name = 'participants'`;
    const actual = new Map(rows.map((row) => [row.column_name, row]));
    for (const field of PARTICIPANT_FIELD_NAMES) {
      const { column, sqlType } = PARTICIPANT_FIELD_COLUMNS[field];
      expect(actual.get(column), field).toMatchObject({ data_type: sqlType, is_nullable: "NO" });
    }
  });

  it("derives the JSON and the writable fields", () => {
    expect(JSON_PARTICIPANT_FIELDS).toEqual([
      "flags",
      "linkingCodes",
      "assignedSurveys",
      "lastSubmissions",
      "messages",
    ]);
    expect(WRITABLE_PARTICIPANT_FIELDS).toEqual([
      "currentStudySession",
      "enteredAt",
      "studyStatus",
      ...JSON_PARTICIPANT_FIELDS,
    ]);
  });

  it("picks exactly the state fields of a row, in table order", () => {
    const fields = Object.fromEntries(PARTICIPANT_FIELD_NAMES.map((f) => [f, `${f}!`])) as Record<
      ParticipantFieldName,
      string
    >;
    const picked = pickParticipantFields({ id: "x", version: 3, ...fields });
    expect(Object.keys(picked)).toEqual(PARTICIPANT_FIELD_NAMES);
    expect(picked.flags).toBe("flags!");
  });
});
