import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { participants } from "@studyflow/db";
import { Conflict } from "@studyflow/domain/errors";
import { submitResponse } from "@studyflow/domain/events";
import { lockParticipant, saveParticipantState, toEngineState } from "@studyflow/domain/participants";
import { createStudy, setStudyRules } from "@studyflow/domain/study-setup";
import { call, createTestDatabase, exp, num, onEvent, str, type TestDatabase } from "@studyflow/testkit";

const NOW = Date.UTC(2031, 4, 1, 9, 30);
const ctx = { clock: () => NOW };

/**
 * Stored JSON that a round trip through JavaScript would change: a decimal's trailing zero and an
 * integer beyond 2^53. A column written only when its state changed keeps them.
 */
const LINKING_CODES = '{"code": "abc", "imported": 1.10}';
const MESSAGES = '[{"id": "m1", "type": "reminder", "legacyId": 12345678901234567891, "scheduledFor": 1999999999}]';

describe("saveParticipantState", () => {
  let database: TestDatabase;

  const storedText = async (participantId: string) => {
    const [row] = await database.db
      .select({
        linkingCodes: sql<string>`${participants.linkingCodes}::text`,
        messages: sql<string>`${participants.messages}::text`,
      })
      .from(participants)
      .where(and(eq(participants.studyKey, "s"), eq(participants.participantId, participantId)));
    return row;
  };
  const freshRow = async (participantId: string) => {
    const [row] = await database.db
      .select()
      .from(participants)
      .where(and(eq(participants.studyKey, "s"), eq(participants.participantId, participantId)));
    return row;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    await createStudy(database.db, { key: "s" });
    await setStudyRules(
      database.db,
      "s",
      [
        onEvent(
          "SUBMIT",
          call("UPDATE_FLAG", str("submitted"), str("yes")),
          call("ADD_NEW_SURVEY", str("weekly"), exp(call("timestampWithOffset", num(86_400))), num(0), str("normal")),
        ),
      ],
      "test",
    );
    for (const participantId of ["p1", "p2", "p3"]) {
      await database.db.insert(participants).values({
        studyKey: "s",
        participantId,
        studyStatus: "active",
        enteredAt: 100,
        modifiedAt: 100,
        hashedAccountId: `account-of-${participantId}`,
        isMainProfile: true,
        flags: { before: "x" },
        linkingCodes: sql`${LINKING_CODES}::jsonb` as never,
        messages: sql`${MESSAGES}::jsonb` as never,
      });
    }
  });
  afterAll(async () => {
    await database.drop();
  });

  it("writes what the rules changed, leaves the other JSON columns exactly as stored, returns the stored row", async () => {
    const { participant } = await submitResponse(
      database.db,
      { studyKey: "s", participantId: "p1", response: { key: "intake" }, submittedBy: "tester" },
      ctx,
    );
    const fresh = await freshRow("p1");
    expect(participant).toEqual(fresh);
    expect(fresh).toMatchObject({
      flags: { before: "x", submitted: "yes" },
      assignedSurveys: [{ surveyKey: "weekly", validFrom: NOW / 1000 + 86_400, validUntil: 0, category: "normal" }],
      lastSubmissions: { intake: NOW / 1000 },
      modifiedAt: NOW / 1000,
      hashedAccountId: "account-of-p1",
      isMainProfile: true,
      version: 2,
    });
    // neither changed by the event: not rewritten from what JavaScript read of them
    expect(await storedText("p1")).toEqual({ linkingCodes: LINKING_CODES, messages: MESSAGES });
  });

  it("writes a change nested in a container the caller replaced", async () => {
    const saved = await database.db.transaction(async (tx) => {
      const row = (await lockParticipant(tx, "s", "p2"))!;
      const state = toEngineState(row);
      const messages = state.messages.map((message) => ({ ...message, scheduledFor: 2_000_000_000 }));
      return saveParticipantState(tx, row, { ...state, messages, studyStatus: "paused" }, 500);
    });
    const fresh = await freshRow("p2");
    expect(saved).toEqual(fresh);
    expect(fresh).toMatchObject({ studyStatus: "paused", modifiedAt: 500, version: 2 });
    expect(fresh!.messages[0]).toMatchObject({ id: "m1", scheduledFor: 2_000_000_000 });
    expect((await storedText("p2"))!.linkingCodes).toBe(LINKING_CODES);
  });

  it("refuses a row another writer changed since it was read, and writes nothing", async () => {
    const stale = (await freshRow("p3"))!;
    await database.db
      .update(participants)
      .set({ version: stale.version + 1 })
      .where(eq(participants.id, stale.id));
    const attempt = database.db.transaction((tx) =>
      saveParticipantState(tx, stale, { ...toEngineState(stale), flags: { after: "y" } }, 600),
    );
    await expect(attempt).rejects.toBeInstanceOf(Conflict);
    expect(await freshRow("p3")).toMatchObject({ flags: { before: "x" }, modifiedAt: 100 });
  });
});
