import { randomUUID } from "node:crypto";
import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { participants, rawClientOf, surveyResponses } from "@studyflow/db";
import { Conflict } from "@studyflow/domain/errors";
import { inEventTransaction, leaveLockedParticipant, submitResponse } from "@studyflow/domain/events";
import { sendParticipantState, toEngineState } from "@studyflow/domain/participants";
import { getStudy } from "@studyflow/domain/studies";
import { createStudy, setStudyRules } from "@studyflow/domain/study-setup";
import { call, createTestDatabase, exp, num, onEvent, str, type TestDatabase } from "@studyflow/testkit";

const NOW = Date.UTC(2031, 4, 1, 9, 30);
const ctx = { clock: () => NOW };
const STUDY = "with-commit";

/**
 * An event's last statements (the state and the response) go to the server with its COMMIT
 * (EventContext.sendWithCommit): whatever fails among them must still take the whole event back,
 * since the COMMIT was sent before their answers came.
 */
describe("an event's writes sent with its COMMIT", () => {
  let database: TestDatabase;

  const rowOf = async (participantId: string) => {
    const [row] = await database.db
      .select()
      .from(participants)
      .where(and(eq(participants.studyKey, STUDY), eq(participants.participantId, participantId)));
    return row!;
  };
  const responsesOf = async (participantId: string) =>
    database.db
      .select({ id: surveyResponses.id, key: surveyResponses.key })
      .from(surveyResponses)
      .where(and(eq(surveyResponses.studyKey, STUDY), eq(surveyResponses.participantId, participantId)));

  beforeAll(async () => {
    database = await createTestDatabase();
    await createStudy(database.db, { key: STUDY });
    // one IFTHEN per survey inside SUBMIT, as case-editor-tools writes them
    await setStudyRules(
      database.db,
      STUDY,
      [
        onEvent(
          "SUBMIT",
          call(
            "IFTHEN",
            exp(call("checkSurveyResponseKey", str("weekly"))),
            exp(call("UPDATE_FLAG", str("lastWeekly"), str("done"))),
            exp(call("REMOVE_SURVEYS_BY_KEY", str("weekly"))),
            exp(
              call(
                "ADD_NEW_SURVEY",
                str("weekly"),
                exp(call("timestampWithOffset", num(604_800))),
                num(0),
                str("normal"),
              ),
            ),
          ),
          call(
            "IFTHEN",
            exp(call("checkSurveyResponseKey", str("refused"))),
            exp(call("UPDATE_FLAG", str("refusedSent"), str("yes"))),
            exp(call("INIT_REPORT", str("refusedReport"))),
          ),
        ),
      ],
      "test",
    );
    for (const participantId of ["p1", "p2", "p3", "p4"]) {
      await database.db.insert(participants).values({
        studyKey: STUDY,
        participantId,
        studyStatus: "active",
        enteredAt: 100,
        modifiedAt: 100,
      });
    }
    // the server refuses responses to the survey "refused" (as a check or a trigger of its own might)
    await database.sql.unsafe(`
      create function refuse_response() returns trigger language plpgsql as $$
      begin
        if new.key = 'refused' then raise exception 'responses to "refused" are refused'; end if;
        return new;
      end $$;
      create trigger refuse_response before insert on survey_responses
        for each row execute function refuse_response();`);
  });
  afterAll(async () => {
    await database.drop();
  });

  it("a submit stores the new state and the response together", async () => {
    const before = await rowOf("p1");
    const result = await submitResponse(
      database.db,
      { studyKey: STUDY, participantId: "p1", submittedBy: "test", response: { key: "weekly", responses: [] } },
      ctx,
    );
    const after = await rowOf("p1");
    expect(after.version).toBe(before.version + 1);
    expect(after.flags).toEqual({ lastWeekly: "done" });
    expect(after.assignedSurveys.map((survey) => survey.surveyKey)).toEqual(["weekly"]);
    // the row the operation returns is the one stored
    expect(result.participant).toEqual(after);
    expect(await responsesOf("p1")).toEqual([{ id: result.responseId, key: "weekly" }]);
  });

  it("a response the server refuses takes the participant's new state and its report back with it", async () => {
    const before = await rowOf("p2");
    const attempt = submitResponse(
      database.db,
      { studyKey: STUDY, participantId: "p2", submittedBy: "test", response: { key: "refused", responses: [] } },
      ctx,
    );
    await expect(attempt).rejects.toMatchObject({ message: 'responses to "refused" are refused' });
    expect(await rowOf("p2")).toEqual(before);
    expect(await responsesOf("p2")).toEqual([]);
    // the report its rules wrote went with the COMMIT, and is gone with the rest
    const [reports] = await database.sql<{ n: number }[]>`select count(*)::int as n from reports
      where study_key = ${STUDY} and participant_id = 'p2'`;
    expect(reports!.n).toBe(0);
  });

  it("a state written over since it was read fails on the server: the COMMIT sent behind it keeps nothing", async () => {
    const stale = await rowOf("p3");
    await database.db
      .update(participants)
      .set({ version: stale.version + 1 })
      .where(eq(participants.id, stale.id));
    const responseId = randomUUID();
    const attempt = inEventTransaction(database.db, ctx, (tx, eventCtx) => {
      const { sent } = sendParticipantState(tx, stale, { ...toEngineState(stale), flags: { stale: "yes" } }, 600);
      eventCtx.sendWithCommit(sent);
      eventCtx.sendWithCommit(
        rawClientOf(tx)`insert into survey_responses (id, study_key, participant_id, key, arrived_at)
          values (${responseId}, ${STUDY}, 'p3', 'weekly', 600)`.execute(),
      );
      // returns before either statement is answered, as an event's work does
      return Promise.resolve();
    });
    await expect(attempt).rejects.toBeInstanceOf(Conflict);
    expect(await rowOf("p3")).toEqual({ ...stale, version: stale.version + 1 });
    expect(await responsesOf("p3")).toEqual([]);
  });

  it("a statement awaited behind a failed one: the operation throws the first failure, not the aborted transaction's", async () => {
    const stale = await rowOf("p3");
    const attempt = inEventTransaction(database.db, ctx, async (tx, eventCtx) => {
      const { sent } = sendParticipantState(
        tx,
        { ...stale, version: stale.version - 1 },
        { ...toEngineState(stale), flags: { stale: "again" } },
        700,
      );
      eventCtx.sendWithCommit(sent);
      // answered "current transaction is aborted" (25P02) by the server
      await tx.execute(sql`select 1`);
    });
    await expect(attempt).rejects.toBeInstanceOf(Conflict);
    expect(await rowOf("p3")).toEqual(stale);
  });

  it("a leave removes the participant's confidential responses with its COMMIT", async () => {
    const row = await rowOf("p4");
    await database.sql`insert into confidential_responses (study_key, confidential_id, key, responses)
      values (${STUDY}, 'c-p4', 'consent', '[]'::jsonb)`;
    // the participant of no profile: its confidential id is given, as the deletion of an account gives it
    const study = await getStudy(database.db, STUDY);
    await inEventTransaction(database.db, ctx, (tx, eventCtx) =>
      leaveLockedParticipant(tx, { study, row, confidentialId: "c-p4" }, eventCtx),
    );
    expect((await rowOf("p4")).studyStatus).toBe("exited");
    const [left] = await database.sql<{ n: number }[]>`select count(*)::int as n from confidential_responses
      where study_key = ${STUDY} and confidential_id = 'c-p4'`;
    expect(left!.n).toBe(0);
  });
});
