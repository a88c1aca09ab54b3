import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { idempotencyKeys, rawClientOf, reports, surveyResponses } from "@studyflow/db";
import { submitResponse, type TransactionHooks } from "@studyflow/domain/events";
import {
  call,
  onEvent,
  participantIdOf,
  participantUser,
  postJson,
  readParticipant,
  setupStudy,
  str,
} from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

// The Idempotency-Key's claim and answer travel with the event's first statement and its COMMIT
// (TransactionHooks.beginPipelined and withCommit): what happens when they fail on the server.

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);
const weekly = {
  key: "weekly",
  submittedAt: NOW / 1000 - 5,
  responses: [{ key: "weekly.q1", response: { key: "rg", items: [{ key: "yes" }] } }],
};

describe("pipelined transaction hooks", () => {
  let t: TestApp;
  let study: Awaited<ReturnType<typeof setupStudy>>;

  beforeAll(async () => {
    t = await createTestApp();
    t.setNow(NOW);
    study = await setupStudy(t, { key: "study-p", rules: [onEvent("SUBMIT", call("INIT_REPORT", str("submitted")))] });
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(async () => {
    await t.database.sql`delete from participants`;
    await t.database.sql`delete from reports`;
    await t.database.sql`delete from survey_responses`;
    await t.database.sql`delete from idempotency_keys`;
  });

  async function enteredProfile() {
    const user = await participantUser(t);
    const profileID = user.profiles[0]!.id;
    expect((await postJson(t, "/v1/study-service/events/study-p/enter", { profileID }, user.token)).status).toBe(200);
    return profileID;
  }

  const submitWith = (profileId: string, hooks: TransactionHooks) =>
    submitResponse(
      t.database.db,
      { studyKey: "study-p", profileId, response: weekly, submittedBy: "participant" },
      { clock: () => NOW, transactionHooks: hooks },
    );

  async function expectNothingStored(profileId: string) {
    expect(await t.database.db.select().from(surveyResponses)).toHaveLength(0);
    expect((await t.database.db.select().from(reports)).filter((r) => r.key === "submitted")).toHaveLength(0);
    const row = await readParticipant(t.database.db, "study-p", participantIdOf(study, profileId));
    expect(row?.lastSubmissions ?? {}).toEqual({});
  }

  it("a statement sent with the COMMIT that fails on the server rolls the event back and is the error", async () => {
    const profileId = await enteredProfile();
    await expect(
      submitWith(profileId, {
        withCommit: (tx) => rawClientOf(tx)`select 1 / 0`.execute(),
      }),
    ).rejects.toThrow(/division by zero/);
    await expectNothingStored(profileId);
  });

  it("a pipelined begin that fails on the server stops the event before any of its statements", async () => {
    const profileId = await enteredProfile();
    await expect(
      submitWith(profileId, {
        beginPipelined: async (tx) => {
          await rawClientOf(tx)`select 1 / 0`.execute();
        },
      }),
    ).rejects.toThrow(/division by zero/);
    await expectNothingStored(profileId);
  });

  it("both succeed: the event and what they wrote commit together", async () => {
    const profileId = await enteredProfile();
    await submitWith(profileId, {
      beginPipelined: async (tx) => {
        await rawClientOf(tx)`
          insert into idempotency_keys (scope, key, operation, request_hash) values ('s', 'k', 'op', 'h')`.execute();
      },
      withCommit: (tx) => rawClientOf(tx)`update idempotency_keys set status = 200 where scope = 's'`.execute(),
    });
    expect(await t.database.db.select().from(surveyResponses)).toHaveLength(1);
    const [key] = await t.database.db.select().from(idempotencyKeys);
    expect(key?.status).toBe(200);
  });

  it("a key whose answer is stored is replayed by a sequential retry without running the event again", async () => {
    const user = await participantUser(t);
    const profileID = user.profiles[0]!.id;
    await postJson(t, "/v1/study-service/events/study-p/enter", { profileID }, user.token);
    const body = { profileID, response: weekly };
    const headers = { "Idempotency-Key": "pipelined-1" };
    const first = await postJson(t, "/v1/study-service/events/study-p/submit", body, user.token, "POST", headers);
    const retry = await postJson(t, "/v1/study-service/events/study-p/submit", body, user.token, "POST", headers);
    expect([first.status, retry.status]).toEqual([200, 200]);
    expect(retry.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await retry.json()).toEqual(await first.json());
    const [key] = await t.database.db.select().from(idempotencyKeys);
    expect(key?.status).toBe(200);
    expect(key?.completedAt).toBeInstanceOf(Date);
    expect(await t.database.db.select().from(surveyResponses)).toHaveLength(1);
  });
});
