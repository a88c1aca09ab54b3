import { OpenAPIHono } from "@hono/zod-openapi";
import { Validator } from "@seriousme/openapi-schema-validator";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { confidentialResponses, profiles, reports, surveyResponses, surveyVersions } from "@studyflow/db";
import { mintManagementToken } from "@studyflow/domain/access";
import { systemClock } from "@studyflow/domain/foundation";
import { MAX_PROFILES_PER_USER } from "@studyflow/domain/participant-accounts";
import { confidentialIdOf } from "@studyflow/domain/participants";
import {
  bearer,
  call,
  caseLeaveRule,
  caseRequest,
  exp,
  onEvent,
  participantIdOf,
  participantUser,
  postJson,
  readParticipant,
  setupStudy,
  str,
} from "./fixtures";
import type { AppEnv } from "../src/app-env";
import { createRedisRateLimiter } from "../src/rate-limit";
import { registerOpenApi } from "../src/routes/docs";
import { createNewsletterRouter } from "../src/routes/unsubscribe-newsletter";
import { createUserRouter } from "../src/routes/user";
import { createTestApp, type TestApp } from "./test-app";

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);
const NOW_S = NOW / 1000;

const leaveRule = caseLeaveRule("leftBy", "profile-removal");
const rules = [onEvent("ENTER", call("UPDATE_FLAG", str("entered"), str("yes"))), leaveRule];

const get = (t: TestApp, path: string, token?: string) => t.app.request(path, { headers: token ? bearer(token) : {} });

async function enter(t: TestApp, studyKey: string, profileId: string, token: string) {
  const res = await postJson(t, `/v1/study-service/events/${studyKey}/enter`, { profileID: profileId }, token);
  expect(res.status).toBe(200);
}

describe("/v1/user: the account and its profiles", () => {
  let t: TestApp;
  let study: Awaited<ReturnType<typeof setupStudy>>;
  let other: Awaited<ReturnType<typeof setupStudy>>;

  beforeAll(async () => {
    t = await createTestApp();
    t.setNow(NOW);
    study = await setupStudy(t, { key: "study-a", rules });
    other = await setupStudy(t, { key: "study-b", rules: [leaveRule] });
    await t.database.db.insert(surveyVersions).values({
      studyKey: "study-a",
      surveyKey: "exit",
      versionId: "v1",
      definition: {},
      publishedBy: "test",
    });
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(async () => {
    await t.database.sql`delete from participants`;
    await t.database.sql`delete from reports`;
    await t.database.sql`delete from survey_responses`;
    await t.database.sql`delete from confidential_responses`;
  });

  it("documents every /v1/user operation, participant-secured, in a valid OpenAPI document", async () => {
    // the user routers alone, as the app mounts them: other routers' documents are their tests' business
    const app = new OpenAPIHono<AppEnv>();
    const limiter = createRedisRateLimiter(t.deps.redis, { clock: systemClock, prefix: t.config.QUEUE_PREFIX });
    app.route("/v1/user", createUserRouter(t.deps, limiter));
    app.route("/v1/unsubscribe-newsletter", createNewsletterRouter(t.deps, limiter));
    registerOpenApi(app);
    const res = await app.request("/openapi.json");
    expect(res.status, await res.clone().text()).toBe(200);
    const doc = (await res.json()) as {
      paths: Record<string, Record<string, { security?: unknown; responses: Record<string, unknown> }>>;
    };
    const secured = [
      ["get", "/v1/user"],
      ["post", "/v1/user/profiles"],
      ["put", "/v1/user/profiles"],
      ["post", "/v1/user/profiles/remove"],
      ["post", "/v1/user/password"],
      ["post", "/v1/user/change-account-email"],
      ["post", "/v1/user/change-phone-number"],
      ["get", "/v1/user/request-phone-number-verification"],
      ["put", "/v1/user/contact-preferences"],
    ] as const;
    for (const [method, path] of secured) {
      const operation = doc.paths[path]?.[method];
      expect(operation, `${method} ${path}`).toBeDefined();
      expect(operation!.security).toEqual([{ participantBearer: [] }]);
      expect(Object.keys(operation!.responses)).toContain("401");
    }
    const unsubscribe = doc.paths["/v1/unsubscribe-newsletter"]?.post;
    expect(unsubscribe?.security ?? []).toEqual([]);
    const outcome = await new Validator().validate(doc);
    expect(outcome.errors ?? []).toEqual([]);
  });

  describe("GET /v1/user", () => {
    it("answers the CASE user, main profile first, at both paths, without secrets", async () => {
      const user = await participantUser(t, ["main", "child"]);
      for (const path of ["/v1/user", "/v1/user/"]) {
        const res = await get(t, path, user.token);
        expect(res.status, path).toBe(200);
        const body = (await res.json()) as { user: Record<string, unknown> & { profiles: { id: string }[] } };
        expect(body.user).toMatchObject({
          id: user.user.id,
          account: { type: "email", accountID: user.user.email, accountConfirmedAt: 0, authType: "password" },
          contactPreferences: { subscribedToNewsletter: false, subscribedToWeekly: false },
        });
        expect(body.user.profiles.map((p) => p.id)).toEqual(user.profiles.map((p) => p.id));
        const text = JSON.stringify(body);
        expect(text).not.toContain("argon2");
        expect(text).not.toMatch(/"password(Hash)?":/i);
      }
    });

    it("401 without a token, with a management token, and with a token of another kind", async () => {
      expect((await get(t, "/v1/user")).status).toBe(401);
      const user = await participantUser(t);
      const management = await mintManagementToken({
        now: Date.now(),
        subject: user.user.id,
        isAdmin: true,
        secret: t.config.MANAGEMENT_JWT_SECRET,
      });
      expect((await get(t, "/v1/user", management)).status).toBe(401);
      expect((await get(t, "/v1/user/", "not-a-token")).status).toBe(401);
    });
  });

  describe("POST and PUT /v1/user/profiles", () => {
    it("adds a profile from a text/plain CASE body; the client's id and mainProfile are ignored", async () => {
      const user = await participantUser(t);
      const res = await caseRequest(
        t,
        "POST",
        "/v1/user/profiles",
        { id: "ffffffffffffffffffffffff", alias: "Kid", avatarID: "cat", consentConfirmedAt: NOW_S, mainProfile: true },
        user.token,
      );
      expect(res.status).toBe(200);
      const { profile } = (await res.json()) as { profile: Record<string, unknown> };
      expect(profile).toMatchObject({
        alias: "Kid",
        avatarID: "cat",
        consentConfirmedAt: NOW_S,
        mainProfile: false,
      });
      expect(profile.id).not.toBe("ffffffffffffffffffffffff");
      const rows = await t.database.db.select().from(profiles).where(eq(profiles.userId, user.user.id));
      expect(rows.map((r) => r.mainProfile).sort()).toEqual([false, true]);

      const listed = (await (await get(t, "/v1/user", user.token)).json()) as { user: { profiles: unknown[] } };
      expect(listed.user.profiles).toHaveLength(2);
    });

    it(`stops at ${MAX_PROFILES_PER_USER} profiles with 409`, async () => {
      const user = await participantUser(t);
      for (let i = 1; i < MAX_PROFILES_PER_USER; i += 1) {
        expect((await caseRequest(t, "POST", "/v1/user/profiles", { alias: `p${i}` }, user.token)).status).toBe(200);
      }
      const refused = await caseRequest(t, "POST", "/v1/user/profiles", { alias: "one too many" }, user.token);
      expect(refused.status).toBe(409);
      expect(await refused.json()).toEqual({ error: `an account holds at most ${MAX_PROFILES_PER_USER} profiles` });
    });

    it("400 for a bad field, 401 without a token", async () => {
      const user = await participantUser(t);
      const bad = await caseRequest(t, "POST", "/v1/user/profiles", { alias: "x".repeat(101) }, user.token);
      expect(bad.status).toBe(400);
      expect((await bad.json()).error).toMatch(/body\.alias/);
      const notJson = await t.app.request("/v1/user/profiles", {
        method: "POST",
        headers: { ...bearer(user.token), "content-type": "text/plain" },
        body: "{not json",
      });
      expect(notJson.status).toBe(400);
      expect((await caseRequest(t, "POST", "/v1/user/profiles", { alias: "x" })).status).toBe(401);
    });

    it("updates alias, avatar and consent; the main flag stays", async () => {
      const user = await participantUser(t, ["main", "child"]);
      const main = user.profiles[0]!;
      const res = await caseRequest(
        t,
        "PUT",
        "/v1/user/profiles",
        { id: main.id, alias: "Me", avatarID: "owl", consentConfirmedAt: NOW_S, mainProfile: false },
        user.token,
      );
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        profile: { id: main.id, alias: "Me", avatarID: "owl", consentConfirmedAt: NOW_S, mainProfile: true },
      });
    });

    it("another user's profile is a 404 and stays as it was; an id is required", async () => {
      const owner = await participantUser(t);
      const intruder = await participantUser(t);
      const target = owner.profiles[0]!;
      const res = await caseRequest(t, "PUT", "/v1/user/profiles", { id: target.id, alias: "pwned" }, intruder.token);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: "profile not found" });
      const [row] = await t.database.db.select().from(profiles).where(eq(profiles.id, target.id));
      expect(row!.alias).toBe(target.alias);
      const noId = await caseRequest(t, "PUT", "/v1/user/profiles", { alias: "x" }, owner.token);
      expect(noId.status).toBe(400);
      expect((await noId.json()).error).toMatch(/body\.id/);
    });
  });

  describe("profile times in seconds or milliseconds (CASE's int64)", () => {
    /** What tekenradar's profile editor sends when consent is ticked: Date.now(). */
    const NOW_MS = NOW + 457;

    const storedConsent = async (profileId: string) => {
      const [row] = await t.database.db.select().from(profiles).where(eq(profiles.id, profileId));
      return row!.consentConfirmedAt;
    };

    it("adds a child profile with consentConfirmedAt in milliseconds; stored and answered in seconds", async () => {
      const user = await participantUser(t);
      const res = await caseRequest(
        t,
        "POST",
        "/v1/user/profiles",
        { id: "", avatarID: "default", alias: "Kind", consentConfirmedAt: NOW_MS },
        user.token,
      );
      expect(res.status, await res.clone().text()).toBe(200);
      const { profile } = (await res.json()) as { profile: { id: string; consentConfirmedAt: number } };
      expect(profile.consentConfirmedAt).toBe(NOW_S);
      expect(await storedConsent(profile.id)).toEqual(new Date(NOW));
      const listed = (await (await get(t, "/v1/user", user.token)).json()) as {
        user: { profiles: { id: string; consentConfirmedAt: number }[] };
      };
      expect(listed.user.profiles.find((p) => p.id === profile.id)?.consentConfirmedAt).toBe(NOW_S);
    });

    it("edits the main profile with the profile as GET /v1/user gave it and a new consent in milliseconds", async () => {
      const user = await participantUser(t, ["main", "child"]);
      const listed = (await (await get(t, "/v1/user", user.token)).json()) as {
        user: { profiles: Record<string, unknown>[] };
      };
      const main = listed.user.profiles[0]!;
      const res = await caseRequest(
        t,
        "PUT",
        "/v1/user/profiles",
        { ...main, alias: "Ik", consentConfirmedAt: NOW_MS },
        user.token,
      );
      expect(res.status, await res.clone().text()).toBe(200);
      expect(await res.json()).toMatchObject({
        profile: { id: main.id, alias: "Ik", consentConfirmedAt: NOW_S, mainProfile: true },
      });
    });

    it("takes 10^11 and above for milliseconds, below for seconds", async () => {
      const user = await participantUser(t);
      const id = user.profiles[0]!.id;
      for (const [sent, seconds] of [
        [99_999_999_999, 99_999_999_999],
        [100_000_000_000, 100_000_000],
        [100_000_000_999, 100_000_000],
        [NOW_S, NOW_S],
        [0, 0],
      ] as const) {
        const res = await caseRequest(t, "PUT", "/v1/user/profiles", { id, consentConfirmedAt: sent }, user.token);
        expect(res.status, String(sent)).toBe(200);
        expect(((await res.json()) as { profile: { consentConfirmedAt: number } }).profile.consentConfirmedAt).toBe(
          seconds,
        );
      }
    });

    it("400 naming the field for a negative, fractional, non-numeric or too late time; nothing changes", async () => {
      const user = await participantUser(t, ["main", "child"]);
      const child = user.profiles[1]!;
      const set = await caseRequest(
        t,
        "PUT",
        "/v1/user/profiles",
        { id: child.id, consentConfirmedAt: NOW_S },
        user.token,
      );
      expect(set.status).toBe(200);
      for (const [value, message] of [
        [-1, /body\.consentConfirmedAt: consentConfirmedAt must not be negative/],
        [-NOW_MS, /must not be negative/],
        [NOW_S + 0.5, /whole Unix seconds or milliseconds/],
        [2 ** 63, /whole Unix seconds or milliseconds/],
        ["1795918018457", /body\.consentConfirmedAt/],
        [253_402_300_800_000, /consentConfirmedAt is beyond the year 9999/],
      ] as const) {
        for (const method of ["PUT", "POST"]) {
          const res = await caseRequest(
            t,
            method,
            "/v1/user/profiles",
            { id: child.id, alias: "changed", consentConfirmedAt: value },
            user.token,
          );
          expect(res.status, `${method} ${value}`).toBe(400);
          expect(((await res.json()) as { error: string }).error).toMatch(message);
        }
      }
      const rows = await t.database.db.select().from(profiles).where(eq(profiles.userId, user.user.id));
      expect(rows).toHaveLength(2);
      const stored = rows.find((row) => row.id === child.id)!;
      expect(stored.alias).toBe("child");
      expect(stored.consentConfirmedAt).toEqual(new Date(NOW));
      const late = await caseRequest(t, "PUT", "/v1/user/profiles", { id: child.id, createdAt: -5 }, user.token);
      expect(late.status).toBe(400);
      expect(((await late.json()) as { error: string }).error).toMatch(/body\.createdAt/);
    });

    it("another user's profile id with a consent in milliseconds is a 404 and changes nothing", async () => {
      const owner = await participantUser(t);
      const intruder = await participantUser(t);
      const target = owner.profiles[0]!;
      const res = await caseRequest(
        t,
        "PUT",
        "/v1/user/profiles",
        { id: target.id, alias: "pwned", consentConfirmedAt: NOW_MS },
        intruder.token,
      );
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: "profile not found" });
      const [row] = await t.database.db.select().from(profiles).where(eq(profiles.id, target.id));
      expect(row).toEqual(target);
    });
  });

  describe("POST /v1/user/profiles/remove", () => {
    it("each participant of the profile leaves through LEAVE (flag, report), ends accountDeleted; exit survey first", async () => {
      const user = await participantUser(t, ["main", "child"]);
      const child = user.profiles[1]!;
      await enter(t, "study-a", child.id, user.token);
      await enter(t, "study-b", child.id, user.token);
      const participantA = participantIdOf(study, child.id);
      await t.database.db.insert(confidentialResponses).values({
        studyKey: "study-a",
        confidentialId: confidentialIdOf(study.secret, participantA),
        key: "email",
        responses: [],
      });

      const res = await caseRequest(
        t,
        "POST",
        "/v1/user/profiles/remove",
        {
          profileId: child.id,
          exitSurveyResponse: { key: "exit", versionId: "v1", submittedAt: NOW_S, responses: [{ key: "exit.Q1" }] },
        },
        user.token,
      );
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ message: "profile removed", warnings: [] });

      for (const [s, key] of [
        [study, "study-a"],
        [other, "study-b"],
      ] as const) {
        const row = await readParticipant(t.database.db, key, participantIdOf(s, child.id));
        expect(row).toMatchObject({
          studyStatus: "accountDeleted",
          flags: expect.objectContaining({ leftBy: "profile-removal" }),
        });
      }
      const leaveReports = (await t.database.db.select().from(reports)).filter((r) => r.eventType === "LEAVE");
      expect(leaveReports.map((r) => [r.studyKey, r.key]).sort()).toEqual([
        ["study-a", "goodbye"],
        ["study-b", "goodbye"],
      ]);
      expect(await t.database.db.select().from(confidentialResponses)).toHaveLength(0);
      // the exit survey went to the study that has a survey of its key, and only there
      const stored = await t.database.db.select().from(surveyResponses);
      expect(stored.map((r) => [r.studyKey, r.key, r.participantId])).toEqual([["study-a", "exit", participantA]]);
      expect(stored[0]!.context).toMatchObject({ submittedBy: "participant" });
      expect(JSON.stringify(stored)).not.toContain(user.user.id);

      expect(await t.database.db.select().from(profiles).where(eq(profiles.id, child.id))).toHaveLength(0);
      const listed = (await (await get(t, "/v1/user", user.token)).json()) as { user: { profiles: { id: string }[] } };
      expect(listed.user.profiles.map((p) => p.id)).toEqual([user.profiles[0]!.id]);
      // the removed profile acts no more
      const gone = await postJson(t, "/v1/study-service/events/study-a/enter", { profileID: child.id }, user.token);
      expect(gone.status).toBe(403);
    });

    it("the main profile is not removable (400), and nothing changes", async () => {
      const user = await participantUser(t, ["main", "child"]);
      const main = user.profiles[0]!;
      await enter(t, "study-a", main.id, user.token);
      const res = await caseRequest(t, "POST", "/v1/user/profiles/remove", { profileId: main.id }, user.token);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: "profileId: the main profile cannot be removed" });
      expect((await readParticipant(t.database.db, "study-a", participantIdOf(study, main.id)))?.studyStatus).toBe(
        "active",
      );
      expect(await t.database.db.select().from(profiles).where(eq(profiles.id, main.id))).toHaveLength(1);
    });

    it("another user's profile is a 404; unknown too; no token 401; no profileId 400", async () => {
      const owner = await participantUser(t, ["main", "child"]);
      const intruder = await participantUser(t);
      const child = owner.profiles[1]!;
      await enter(t, "study-a", child.id, owner.token);
      const res = await caseRequest(t, "POST", "/v1/user/profiles/remove", { profileId: child.id }, intruder.token);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: "profile not found" });
      expect((await readParticipant(t.database.db, "study-a", participantIdOf(study, child.id)))?.studyStatus).toBe(
        "active",
      );
      expect(await t.database.db.select().from(profiles).where(eq(profiles.id, child.id))).toHaveLength(1);
      expect(
        (await caseRequest(t, "POST", "/v1/user/profiles/remove", { profileId: "nope" }, owner.token)).status,
      ).toBe(404);
      expect((await caseRequest(t, "POST", "/v1/user/profiles/remove", { profileId: child.id })).status).toBe(401);
      const missing = await caseRequest(t, "POST", "/v1/user/profiles/remove", {}, owner.token);
      expect(missing.status).toBe(400);
      expect((await missing.json()).error).toMatch(/body\.profileId/);
    });

    it("a strict study whose LEAVE rule fails rejects the whole removal", async () => {
      const strict = await setupStudy(t, {
        key: "study-strict",
        // no response in a LEAVE event: the expression fails when it runs
        rules: [
          onEvent(
            "LEAVE",
            call("UPDATE_FLAG", str("exit"), exp(call("getResponseValueAsStr", str("exit.Q1"), str("rg")))),
          ),
        ],
        settings: { strictRules: true },
      });
      const user = await participantUser(t, ["main", "child"]);
      const child = user.profiles[1]!;
      await enter(t, "study-a", child.id, user.token);
      await enter(t, "study-strict", child.id, user.token);
      const res = await caseRequest(t, "POST", "/v1/user/profiles/remove", { profileId: child.id }, user.token);
      expect(res.status).toBe(422);
      expect((await readParticipant(t.database.db, "study-a", participantIdOf(study, child.id)))?.studyStatus).toBe(
        "active",
      );
      expect(
        (await readParticipant(t.database.db, "study-strict", participantIdOf(strict, child.id)))?.studyStatus,
      ).toBe("active");
      expect(await t.database.db.select().from(profiles).where(eq(profiles.id, child.id))).toHaveLength(1);
      await t.database.sql`delete from studies where key = 'study-strict'`;
    });
  });
});
