import { Hono } from "hono";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { idempotencyKeys, reports, surveyResponses } from "@studyflow/db";
import { submitResponse } from "@studyflow/domain/events";
import { IDEMPOTENCY_KEY_TTL_MS, removeExpiredIdempotencyKeys } from "@studyflow/domain/idempotency";
import {
  call,
  exp,
  insertParticipant,
  onEvent,
  participantIdOf,
  participantUser,
  postJson,
  readParticipant,
  researcher,
  setupStudy,
  str,
} from "./fixtures";
import type { AppEnv } from "../src/app-env";
import { temporaryParticipantScope } from "../src/middleware/idempotency";
import { createTestApp, type TestApp } from "./test-app";

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);
const NOW_S = NOW / 1000;

const rules = [
  onEvent("ENTER", call("INIT_REPORT", str("entered"))),
  onEvent("SUBMIT", call("INIT_REPORT", str("submitted"))),
  onEvent("CUSTOM", call("INIT_REPORT", str("custom"))),
  onEvent("LEAVE", call("INIT_REPORT", str("left"))),
  onEvent("MERGE", call("INIT_REPORT", str("merged"))),
];

const events = (study: string, what: string) => `/v1/study-service/events/${study}/${what}`;
const withKey = (key: string) => ({ "Idempotency-Key": key });
const weekly = (answer = "yes") => ({
  key: "weekly",
  submittedAt: NOW_S - 5,
  responses: [{ key: "weekly.q1", response: { key: "rg", items: [{ key: answer }] } }],
});

describe("Idempotency-Key on participant events and the management submit", () => {
  let t: TestApp;
  let study: Awaited<ReturnType<typeof setupStudy>>;

  beforeAll(async () => {
    t = await createTestApp();
    t.setNow(NOW);
    study = await setupStudy(t, { key: "study-a", rules });
    // ENTER reads a response that an ENTER event does not have: a strict study rejects the event
    const failingEnter = onEvent(
      "ENTER",
      call("UPDATE_FLAG", str("age"), exp(call("getResponseValueAsStr", str("intake.Q2"), str("rg.num")))),
    );
    await setupStudy(t, { key: "study-strict", rules: [failingEnter], settings: { strictRules: true } });
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(async () => {
    t.setNow(NOW);
    await t.database.sql`delete from participants`;
    await t.database.sql`delete from reports`;
    await t.database.sql`delete from survey_responses`;
    await t.database.sql`delete from idempotency_keys`;
  });

  /** A user whose main profile has entered study-a. */
  async function enteredUser(studyKey = "study-a") {
    const user = await participantUser(t);
    const profileID = user.profiles[0]!.id;
    expect((await postJson(t, events(studyKey, "enter"), { profileID }, user.token)).status).toBe(200);
    return { ...user, profileID };
  }

  const count = async (table: typeof surveyResponses | typeof reports | typeof idempotencyKeys) =>
    (await t.database.db.select().from(table)).length;
  const submittedReports = async () =>
    (await t.database.db.select().from(reports)).filter((report) => report.key === "submitted").length;

  describe("sequential retries", () => {
    it("a retry of a submit answers the first answer again and stores nothing again", async () => {
      const user = await enteredUser();
      const body = { profileID: user.profileID, response: weekly() };
      const first = await postJson(t, events("study-a", "submit"), body, user.token, "POST", withKey("submit-1"));
      expect(first.status).toBe(200);
      expect(first.headers.get("Idempotent-Replayed")).toBeNull();
      const firstBody = await first.json();

      t.setNow(NOW + 60_000);
      // the same request, its keys in another order and sent as a CASE app sends it (text/plain)
      const retry = await t.app.request(events("study-a", "submit"), {
        method: "POST",
        headers: {
          "Content-Type": "text/plain;charset=UTF-8",
          Authorization: `Bearer ${user.token}`,
          ...withKey("submit-1"),
        },
        body: JSON.stringify({ response: weekly(), profileID: user.profileID }),
      });
      expect(retry.status).toBe(200);
      expect(retry.headers.get("Idempotent-Replayed")).toBe("true");
      expect(await retry.json()).toEqual(firstBody);
      expect(await count(surveyResponses)).toBe(1);
      expect(await submittedReports()).toBe(1);
      expect(await count(idempotencyKeys)).toBe(1);

      // without a key the same request is a new submission
      expect((await postJson(t, events("study-a", "submit"), body, user.token)).status).toBe(200);
      expect(await count(surveyResponses)).toBe(2);
    });

    it("every participant event route: enter, custom, leave and merge run once per key", async () => {
      const user = await participantUser(t);
      const profileID = user.profiles[0]!.id;
      const twice = async (what: string, body: object, key: string) => {
        const answers = [];
        for (let index = 0; index < 2; index++) {
          const res = await postJson(t, events("study-a", what), body, user.token, "POST", withKey(key));
          expect(res.status, `${what} #${index + 1}`).toBe(200);
          answers.push({ replayed: res.headers.get("Idempotent-Replayed"), body: await res.json() });
        }
        expect(answers[1]!.body).toEqual(answers[0]!.body);
        expect(answers.map((answer) => answer.replayed)).toEqual([null, "true"]);
        return answers[0]!.body as Record<string, unknown>;
      };
      // enter: the replay says created: true, as the first answer did
      expect(await twice("enter", { profileID }, "k-enter")).toMatchObject({ created: true });
      await twice("custom", { profileID, eventKey: "KIT_ORDERED", payload: { n: 1 } }, "k-custom");
      await insertParticipant(t.database.db, {
        studyKey: "study-a",
        participantId: "temp-1",
        studyStatus: "temporary",
        enteredAt: NOW_S - 60,
      });
      // without the key the second merge would be a 404: the temporary participant is gone
      await twice("merge-temporary-participant", { profileID, temporaryParticipantID: "temp-1" }, "k-merge");
      // without the key the second leave would be a 409: the participant has left
      await twice("leave", { profileID }, "k-leave");

      const keys = (await t.database.db.select().from(reports)).map((report) => report.key).sort();
      expect(keys).toEqual(["custom", "entered", "left", "merged"]);
      expect(await count(idempotencyKeys)).toBe(4);
    });

    it("the management submit: a researcher's retry answers the first answer; another researcher's key is its own", async () => {
      const user = await enteredUser();
      const participantId = participantIdOf(study, user.profileID);
      const path = `/v1/studies/study-a/participants/${participantId}/responses`;
      const one = await researcher(t, "study-a", "edit-participant-data");
      const two = await researcher(t, "study-a", "edit-participant-data");
      const first = await postJson(t, path, weekly(), one.token, "POST", withKey("m-1"));
      expect(first.status).toBe(200);
      const retry = await postJson(t, path, weekly(), one.token, "POST", withKey("m-1"));
      expect(retry.status).toBe(200);
      expect(retry.headers.get("Idempotent-Replayed")).toBe("true");
      expect(await retry.json()).toEqual(await first.json());
      expect(await count(surveyResponses)).toBe(1);

      const other = await postJson(t, path, weekly(), two.token, "POST", withKey("m-1"));
      expect(other.status).toBe(200);
      expect(other.headers.get("Idempotent-Replayed")).toBeNull();
      expect(await count(surveyResponses)).toBe(2);
      const scopes = (await t.database.db.select().from(idempotencyKeys)).map((row) => row.scope).sort();
      expect(scopes).toEqual([`management:${one.subject}`, `management:${two.subject}`].sort());
    });
  });

  describe("another request with the same key", () => {
    it("another body or another route: 422, nothing stored", async () => {
      const user = await enteredUser();
      const ok = await postJson(
        t,
        events("study-a", "submit"),
        { profileID: user.profileID, response: weekly("yes") },
        user.token,
        "POST",
        withKey("k"),
      );
      expect(ok.status).toBe(200);
      const otherBody = await postJson(
        t,
        events("study-a", "submit"),
        { profileID: user.profileID, response: weekly("no") },
        user.token,
        "POST",
        withKey("k"),
      );
      expect(otherBody.status).toBe(422);
      expect(await otherBody.json()).toEqual({
        error: expect.stringMatching(/^Idempotency-Key was already used for another request/),
      });
      const otherRoute = await postJson(
        t,
        events("study-a", "custom"),
        { profileID: user.profileID, eventKey: "X" },
        user.token,
        "POST",
        withKey("k"),
      );
      expect(otherRoute.status).toBe(422);
      expect(await count(surveyResponses)).toBe(1);
      expect(await count(reports)).toBe(2); // entered, submitted
    });
  });

  describe("keys are per caller", () => {
    it("two users' equal keys do not meet", async () => {
      const alice = await enteredUser();
      const bob = await enteredUser();
      for (const user of [alice, bob]) {
        const res = await postJson(
          t,
          events("study-a", "submit"),
          { profileID: user.profileID, response: weekly() },
          user.token,
          "POST",
          withKey("shared-key"),
        );
        expect(res.status).toBe(200);
        expect(res.headers.get("Idempotent-Replayed")).toBeNull();
      }
      expect(await count(surveyResponses)).toBe(2);
      // bob's key with alice's profile: refused as without a key (the route's checks come before the key's)
      const crossed = await postJson(
        t,
        events("study-a", "submit"),
        { profileID: alice.profileID, response: weekly() },
        bob.token,
        "POST",
        withKey("shared-key"),
      );
      expect(crossed.status).toBe(403);
      expect(await count(surveyResponses)).toBe(2);
    });
  });

  describe("concurrent requests with one key", () => {
    it("exactly one runs; the others wait and answer its answer", async () => {
      const user = await enteredUser();
      const body = { profileID: user.profileID, response: weekly() };
      const answers = await Promise.all(
        Array.from({ length: 6 }, () =>
          postJson(t, events("study-a", "submit"), body, user.token, "POST", withKey("burst")),
        ),
      );
      expect(answers.map((res) => res.status)).toEqual(Array(6).fill(200));
      const bodies = await Promise.all(answers.map((res) => res.json()));
      for (const answer of bodies) expect(answer).toEqual(bodies[0]);
      expect(answers.filter((res) => res.headers.get("Idempotent-Replayed") === "true")).toHaveLength(5);
      expect(await count(surveyResponses)).toBe(1);
      expect(await submittedReports()).toBe(1);
    });

    it("concurrent custom events with one key store one report", async () => {
      const user = await enteredUser();
      const answers = await Promise.all(
        Array.from({ length: 4 }, () =>
          postJson(
            t,
            events("study-a", "custom"),
            { profileID: user.profileID, eventKey: "KIT" },
            user.token,
            "POST",
            withKey("burst-custom"),
          ),
        ),
      );
      expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200]);
      expect((await t.database.db.select().from(reports)).filter((report) => report.key === "custom")).toHaveLength(1);
    });
  });

  describe("a failed request does not use up its key", () => {
    it("a 404 (not a participant yet), then the same key works once the profile entered", async () => {
      const user = await participantUser(t);
      const profileID = user.profiles[0]!.id;
      const body = { profileID, response: weekly() };
      const early = await postJson(t, events("study-a", "submit"), body, user.token, "POST", withKey("early"));
      expect(early.status).toBe(404);
      expect(await count(idempotencyKeys)).toBe(0);
      await postJson(t, events("study-a", "enter"), { profileID }, user.token);
      const retry = await postJson(t, events("study-a", "submit"), body, user.token, "POST", withKey("early"));
      expect(retry.status).toBe(200);
      expect(retry.headers.get("Idempotent-Replayed")).toBeNull();
      expect(await count(surveyResponses)).toBe(1);
    });

    it("a 400 body and a strict study's rejection (422) leave the key free", async () => {
      const user = await enteredUser();
      const bad = await postJson(
        t,
        events("study-a", "submit"),
        { profileID: user.profileID, response: { key: 5 } },
        user.token,
        "POST",
        withKey("bad-then-good"),
      );
      expect(bad.status).toBe(400);
      const good = { profileID: user.profileID, response: weekly() };
      const res = await postJson(t, events("study-a", "submit"), good, user.token, "POST", withKey("bad-then-good"));
      expect(res.status).toBe(200);
      expect(res.headers.get("Idempotent-Replayed")).toBeNull();

      const rejectedTwice = [];
      for (let index = 0; index < 2; index++) {
        const rejected = await postJson(
          t,
          events("study-strict", "enter"),
          { profileID: user.profileID },
          user.token,
          "POST",
          withKey("strict"),
        );
        rejectedTwice.push(rejected.status);
      }
      // both ran (a replay would have been the stored answer): the rejection stored no key
      expect(rejectedTwice).toEqual([422, 422]);
      expect((await t.database.db.select().from(idempotencyKeys)).map((row) => row.key)).toEqual(["bad-then-good"]);
    });

    it("the key's record and the event commit together: a record that cannot be written takes the event back", async () => {
      const user = await enteredUser();
      await expect(
        submitResponse(
          t.database.db,
          { studyKey: "study-a", profileId: user.profileID, response: weekly(), submittedBy: "participant" },
          {
            clock: () => NOW,
            transactionHooks: {
              beforeCommit: () => Promise.reject(new Error("crash before the key's record")),
            },
          },
        ),
      ).rejects.toThrow("crash before the key's record");
      expect(await count(surveyResponses)).toBe(0);
      expect(await submittedReports()).toBe(0);
      const row = await readParticipant(t.database.db, "study-a", participantIdOf(study, user.profileID));
      expect(row?.lastSubmissions ?? {}).toEqual({});
    });
  });

  describe("expiry and format", () => {
    it("a key is remembered for 24 hours, then runs again; the maintenance sweep removes old records", async () => {
      const user = await enteredUser();
      const body = { profileID: user.profileID, response: weekly() };
      expect((await postJson(t, events("study-a", "submit"), body, user.token, "POST", withKey("day"))).status).toBe(
        200,
      );
      t.setNow(NOW + IDEMPOTENCY_KEY_TTL_MS - 1000);
      const within = await postJson(t, events("study-a", "submit"), body, user.token, "POST", withKey("day"));
      expect(within.headers.get("Idempotent-Replayed")).toBe("true");
      expect(await count(surveyResponses)).toBe(1);

      t.setNow(NOW + IDEMPOTENCY_KEY_TTL_MS + 1000);
      const after = await postJson(t, events("study-a", "submit"), body, user.token, "POST", withKey("day"));
      expect(after.status).toBe(200);
      expect(after.headers.get("Idempotent-Replayed")).toBeNull();
      expect(await count(surveyResponses)).toBe(2);
      expect(await count(idempotencyKeys)).toBe(1); // the expired record was taken over

      expect(await removeExpiredIdempotencyKeys(t.database.db, NOW + IDEMPOTENCY_KEY_TTL_MS + 2000)).toBe(0);
      expect(await removeExpiredIdempotencyKeys(t.database.db, NOW + 3 * IDEMPOTENCY_KEY_TTL_MS)).toBe(1);
      expect(await count(idempotencyKeys)).toBe(0);
    });

    it("a key longer than 255 characters, empty or not printable ASCII is a 400 naming the header", async () => {
      const user = await enteredUser();
      const body = { profileID: user.profileID, response: weekly() };
      for (const key of ["", "k".repeat(256), "clé", "a\x7fb"]) {
        const res = await postJson(t, events("study-a", "submit"), body, user.token, "POST", withKey(key));
        expect(res.status, JSON.stringify(key)).toBe(400);
        expect(await res.json()).toEqual({ error: expect.stringMatching(/^Idempotency-Key /) });
      }
      const longest = await postJson(
        t,
        events("study-a", "submit"),
        body,
        user.token,
        "POST",
        withKey("k".repeat(255)),
      );
      expect(longest.status).toBe(200);
      expect(await count(surveyResponses)).toBe(1);
    });

    it("security: no token is a 401 before any key is read; another user's profile is a 403 and stores no key", async () => {
      const owner = await enteredUser();
      const other = await participantUser(t);
      const body = { profileID: owner.profileID, response: weekly() };
      const anonymous = await postJson(t, events("study-a", "submit"), body, undefined, "POST", withKey("x"));
      expect(anonymous.status).toBe(401);
      const foreign = await postJson(t, events("study-a", "submit"), body, other.token, "POST", withKey("x"));
      expect(foreign.status).toBe(403);
      expect(await count(idempotencyKeys)).toBe(0);
      expect(await count(surveyResponses)).toBe(0);
    });
  });

  it("temporary participants' keys (no sign-in) are scoped by the study and the temporary id the body names", async () => {
    const app = new Hono<AppEnv>().post("/", async (c) => c.text(await temporaryParticipantScope(c)));
    const scopeOf = async (body: object) =>
      (await app.request("/", { method: "POST", body: JSON.stringify(body) })).text();
    const one = await scopeOf({ studyKey: "s", pid: "temp-1", response: { key: "a" } });
    expect(one).toMatch(/^temporary:[0-9a-f]{64}$/);
    expect(one).not.toContain("temp-1");
    expect(await scopeOf({ pid: "temp-1", studyKey: "s", response: { key: "b" } })).toBe(one);
    expect(await scopeOf({ studyKey: "s", pid: "temp-2" })).not.toBe(one);
    expect(await scopeOf({ studyKey: "t", pid: "temp-1" })).not.toBe(one);
  });
});
