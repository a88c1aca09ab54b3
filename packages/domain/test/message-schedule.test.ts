import { and, asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { participantMessageSchedule, participants, tasks } from "@studyflow/db";
import { submitResponse } from "@studyflow/domain/events";
import { systemClock } from "@studyflow/domain/foundation";
import { scheduleChanges, scheduleOf } from "@studyflow/domain/participants";
import { createStudy, setStudyRules } from "@studyflow/domain/study-setup";
import { planTask, processChunk } from "@studyflow/domain/task-pipeline";
import { createRunActionsTask } from "@studyflow/domain/tasks";
import type { Expression, ParticipantMessage } from "@studyflow/engine";
import { call, createTestDatabase, exp, num, onEvent, str, type TestDatabase } from "@studyflow/testkit";

const T0 = Date.UTC(2031, 0, 5, 8, 0);
const SECONDS = T0 / 1000;
const ctx = { clock: () => T0 };

const onSurvey = (key: string, ...actions: Expression[]) =>
  onEvent("SUBMIT", call("IFTHEN", exp(call("checkSurveyResponseKey", str(key))), ...actions.map(exp)));

describe("scheduleOf and scheduleChanges", () => {
  const m = (id: string, type: string, scheduledFor: number): ParticipantMessage => ({ id, type, scheduledFor });

  it("has one entry per usable id, due at its earliest time", () => {
    const messages = [
      m("a", "weekly", 200),
      m("a", "weekly", 100),
      m("", "nameless", 5),
      m("b", "final", 1.5),
      { id: "c", type: "x" } as unknown as ParticipantMessage,
      m("d", "final", 300),
    ];
    expect([...scheduleOf(messages)]).toEqual([
      ["a", { messageType: "weekly", dueAt: 100 }],
      ["d", { messageType: "final", dueAt: 300 }],
    ]);
    expect(scheduleOf(null).size).toBe(0);
  });

  it("deletes ids that are gone, writes new or changed ones, and nothing for the same array", () => {
    const before = [m("a", "weekly", 100), m("b", "final", 300), m("c", "x", 5)];
    const after = [m("b", "final", 400), m("c", "x", 5), m("d", "new", 50)];
    const write = { studyKey: "s", participantId: "p", before, after };
    expect(scheduleChanges(write)).toEqual({
      removed: [{ study_key: "s", participant_id: "p", message_id: "a" }],
      upserted: [
        { study_key: "s", participant_id: "p", message_id: "b", message_type: "final", due_at: 400 },
        { study_key: "s", participant_id: "p", message_id: "d", message_type: "new", due_at: 50 },
      ],
    });
    expect(scheduleChanges({ ...write, after: before })).toEqual({ removed: [], upserted: [] });
  });
});

describe("the due-time index follows participants' messages", () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
    await createStudy(database.db, { key: "s" });
    await setStudyRules(
      database.db,
      "s",
      [
        onSurvey(
          "add",
          call("ADD_MESSAGE", str("weekly"), num(SECONDS + 3_600)),
          call("ADD_MESSAGE", str("final"), num(SECONDS + 86_400)),
        ),
        onSurvey("drop-weekly", call("REMOVE_MESSAGES_BY_TYPE", str("weekly"))),
        onSurvey("drop-all", call("REMOVE_ALL_MESSAGES")),
        onSurvey("flag", call("UPDATE_FLAG", str("seen"), str("yes"))),
      ],
      "test",
    );
  });
  afterAll(async () => {
    await database.drop();
  });

  /** A participant as an import leaves it: messages of its own, indexed as the migration's backfill does. */
  async function addParticipant(participantId: string, messages: ParticipantMessage[] = []) {
    await database.db
      .insert(participants)
      .values({ studyKey: "s", participantId, studyStatus: "active", enteredAt: 1, modifiedAt: 1, messages });
    if (messages.length === 0) return;
    await database.db.insert(participantMessageSchedule).values(
      messages.map((message) => ({
        studyKey: "s",
        participantId,
        messageId: message.id,
        messageType: message.type,
        dueAt: message.scheduledFor,
      })),
    );
  }

  /** The index rows and the participant's messages, in the same shape: they must always agree. */
  async function both(participantId: string) {
    const rows = await database.db
      .select()
      .from(participantMessageSchedule)
      .where(
        and(eq(participantMessageSchedule.studyKey, "s"), eq(participantMessageSchedule.participantId, participantId)),
      )
      .orderBy(asc(participantMessageSchedule.messageId));
    const [participant] = await database.db
      .select({ messages: participants.messages })
      .from(participants)
      .where(and(eq(participants.studyKey, "s"), eq(participants.participantId, participantId)));
    const expected = [...scheduleOf(participant?.messages)]
      .map(([messageId, entry]) => ({ messageId, ...entry }))
      .sort((a, b) => a.messageId.localeCompare(b.messageId));
    return { index: rows.map(({ messageId, messageType, dueAt }) => ({ messageId, messageType, dueAt })), expected };
  }

  const submit = (participantId: string, key: string) =>
    submitResponse(database.db, { studyKey: "s", participantId, response: { key }, submittedBy: "test" }, ctx);

  it("single events: ADD_MESSAGE adds rows, REMOVE_MESSAGES_BY_TYPE and REMOVE_ALL_MESSAGES delete them", async () => {
    await addParticipant("p1");
    await submit("p1", "add");
    let state = await both("p1");
    expect(state.index.map((row) => [row.messageType, row.dueAt])).toEqual(
      expect.arrayContaining([
        ["weekly", SECONDS + 3_600],
        ["final", SECONDS + 86_400],
      ]),
    );
    expect(state.index).toEqual(state.expected);

    await submit("p1", "add");
    expect((await both("p1")).index).toHaveLength(4);
    await submit("p1", "drop-weekly");
    state = await both("p1");
    expect(state.index.map((row) => row.messageType)).toEqual(["final", "final"]);
    expect(state.index).toEqual(state.expected);

    // an event that leaves messages alone does not touch the index
    await submit("p1", "flag");
    expect((await both("p1")).index).toEqual(state.index);

    await submit("p1", "drop-all");
    expect(await both("p1")).toEqual({ index: [], expected: [] });
  });

  it("a deleted participant takes its index rows along", async () => {
    await addParticipant("p-gone");
    await submit("p-gone", "add");
    expect((await both("p-gone")).index).toHaveLength(2);
    await database.db.delete(participants).where(eq(participants.participantId, "p-gone"));
    expect((await both("p-gone")).index).toEqual([]);
  });

  async function runTask(rules: Expression[]) {
    const task = await createRunActionsTask(
      database.db,
      { studyKey: "s", rules, dryRun: false, createdBy: "test" },
      () => Promise.resolve(),
      { clock: systemClock },
    );
    const plan = await planTask(database.db, task.id, { clock: systemClock });
    if (plan.status !== "planned") throw new Error(`task not planned: ${plan.status}`);
    for (const chunk of plan.chunks) {
      // small batches: several batch statements, each with its own index statement
      await processChunk(database.db, task.id, chunk.chunkIndex, { ...ctx, batchSize: 7 });
    }
    await database.db.update(tasks).set({ status: "completed" }).where(eq(tasks.id, task.id));
  }

  it("bulk writes: one index statement per batch keeps every participant's rows in line", async () => {
    const ids = Array.from({ length: 30 }, (_, i) => `bulk-${String(i).padStart(2, "0")}`);
    for (const [i, id] of ids.entries()) {
      // some arrive with a message of their own, which the later REMOVE deletes
      await addParticipant(id, i % 3 === 0 ? [{ id: `own-${i}`, type: "weekly", scheduledFor: SECONDS + i }] : []);
    }

    await runTask([call("ADD_MESSAGE", str("bulk"), num(SECONDS + 600))]);
    for (const id of ids) {
      const state = await both(id);
      expect(state.index, id).toEqual(state.expected);
      expect(
        state.index.filter((row) => row.messageType === "bulk"),
        id,
      ).toHaveLength(1);
    }

    // rules that leave messages alone: the index stays as it was
    const before = await database.db
      .select()
      .from(participantMessageSchedule)
      .orderBy(asc(participantMessageSchedule.messageId));
    await runTask([call("UPDATE_FLAG", str("bulkSeen"), str("yes"))]);
    expect(
      await database.db.select().from(participantMessageSchedule).orderBy(asc(participantMessageSchedule.messageId)),
    ).toEqual(before);

    await runTask([call("REMOVE_MESSAGES_BY_TYPE", str("weekly"))]);
    for (const id of ids) {
      const state = await both(id);
      expect(state.index, id).toEqual(state.expected);
      expect(
        state.index.map((row) => row.messageType),
        id,
      ).toEqual(["bulk"]);
    }
  });
});
