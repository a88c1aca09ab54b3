import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { studies } from "@studyflow/db";
import { systemClock } from "@studyflow/domain/foundation";
import { setStudyVariable } from "@studyflow/domain/study-config";
import { bearer, call, onEvent, participantUser, postJson, setupStudy, str } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);
const rules = [onEvent("ENTER", call("UPDATE_FLAG", str("entered"), str("yes")))];
const base = "/v1/study-service/studies";

describe("study-service studies (CASE public study routes and participating studies)", () => {
  let t: TestApp;
  let secrets: string[];

  const get = (path: string, token?: string) => t.app.request(path, { headers: token ? bearer(token) : {} });
  const keysOf = (body: { studies: { key: string }[] }) => body.studies.map((study) => study.key);

  beforeAll(async () => {
    t = await createTestApp();
    t.setNow(NOW);
    const created = [
      await setupStudy(t, { key: "flu", rules }),
      await setupStudy(t, { key: "ticks", rules }),
      await setupStudy(t, { key: "old", rules, status: "inactive" }),
    ];
    secrets = created.map((study) => study.secret);
    await t.database.db
      .update(studies)
      .set({
        props: { name: { en: "Flu watch", nl: "Griepradar" }, tags: ["influenza"], startDate: "2026-05-01" },
        config: { strictRules: true, timeZone: "Europe/Amsterdam" },
        trackAccount: true,
      })
      .where(eq(studies.key, "flu"));
    await t.database.db
      .update(studies)
      .set({ props: { name: { en: "Tick bites" }, systemDefaultStudy: true } })
      .where(eq(studies.key, "ticks"));
    await setStudyVariable(t.database.db, "flu", "kitStock", { type: "int", value: 250 }, "test", {
      clock: systemClock,
    });
    await setStudyVariable(t.database.db, "flu", "launch", { type: "date", value: 1_780_000_000 }, "test", {
      clock: systemClock,
    });
    await t.settle();
  });
  afterAll(async () => {
    await t.close();
  });

  describe("GET /studies?status=", () => {
    it("lists studies of a status in CASE's StudyInfo shape, without a token", async () => {
      const res = await get(`${base}?status=active&instanceID=${t.config.INSTANCE_ID}`);
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(keysOf(body)).toEqual(["flu", "ticks"]);
      const [flu, ticks] = body.studies;
      expect(flu.status).toBe("active");
      expect(flu.props.name).toEqual([
        { code: "en", parts: [{ dtype: "str", str: "Flu watch" }] },
        { code: "nl", parts: [{ dtype: "str", str: "Griepradar" }] },
      ]);
      expect(flu.props.tags).toEqual([{ label: [{ code: "en", parts: [{ dtype: "str", str: "influenza" }] }] }]);
      expect(flu.props.startDate).toBe(Date.UTC(2026, 4, 1) / 1000);
      expect(flu.props.systemDefaultStudy).toBe(false);
      expect(ticks.props.systemDefaultStudy).toBe(true);
      expect(flu.stats).toEqual({ participantCount: 0, tempParticipantCount: 0, responseCount: 0 });
      expect(flu.profileIds).toBeNull();
    });

    it("shows no secret, configuration or rules", async () => {
      const text = await (await get(base)).text();
      for (const secret of secrets) expect(text).not.toContain(secret);
      for (const word of [
        "secret",
        "configs",
        "strictRules",
        "Europe/Amsterdam",
        "trackAccount",
        "rules",
        "UPDATE_FLAG",
      ]) {
        expect(text).not.toContain(word);
      }
    });

    it("lists every study without a status, and none of an unknown status", async () => {
      expect(keysOf(await (await get(base)).json())).toEqual(["flu", "old", "ticks"]);
      expect(keysOf(await (await get(`${base}?status=inactive`)).json())).toEqual(["old"]);
      expect(keysOf(await (await get(`${base}?status=paused`)).json())).toEqual([]);
    });

    it("refuses another instance, naming instanceID", async () => {
      const res = await get(`${base}?status=active&instanceID=elsewhere`);
      expect(res.status).toBe(400);
      expect((await res.json()).error).toMatch(/instanceID/);
    });
  });

  describe("GET /studies/{studyKey}", () => {
    it("shows one study, 404 for an unknown one", async () => {
      const res = await get(`${base}/flu?instanceID=${t.config.INSTANCE_ID}`);
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.study.key).toBe("flu");
      expect(JSON.stringify(body)).not.toContain(secrets[0]!);
      expect((await get(`${base}/nope`)).status).toBe(404);
    });
  });

  describe("GET /studies/participating", () => {
    it("lists the studies where the user's profiles are active participants, with those profiles", async () => {
      const user = await participantUser(t, ["main", "child", "other"]);
      const [main, child, other] = user.profiles;
      for (const [study, profile] of [
        ["flu", main!],
        ["flu", child!],
        ["ticks", other!],
      ] as const) {
        expect(
          (await postJson(t, `/v1/study-service/events/${study}/enter`, { profileID: profile.id }, user.token)).status,
        ).toBe(200);
      }
      // leaving drops the profile from the list
      expect(
        (await postJson(t, `/v1/study-service/events/ticks/leave`, { profileID: other!.id }, user.token)).status,
      ).toBe(200);
      const someoneElse = await participantUser(t, ["x"]);
      await postJson(
        t,
        `/v1/study-service/events/ticks/enter`,
        { profileID: someoneElse.profiles[0]!.id },
        someoneElse.token,
      );

      const res = await get(`${base}/participating`, user.token);
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(keysOf(body)).toEqual(["flu"]);
      expect(body.studies[0].profileIds).toEqual([main!.id, child!.id]);
      expect(JSON.stringify(body)).not.toContain(someoneElse.profiles[0]!.id);

      const fresh = await participantUser(t, ["solo"]);
      expect(await (await get(`${base}/participating`, fresh.token)).json()).toEqual({ studies: [] });
    });

    it("needs a participant token", async () => {
      expect((await get(`${base}/participating`)).status).toBe(401);
      expect((await get(`${base}/participating`, "garbage")).status).toBe(401);
    });
  });

  describe("GET /studies/{studyKey}/variables", () => {
    it("lists the variables' values without a token; dates as RFC 3339", async () => {
      const res = await get(`${base}/flu/variables?instanceID=${t.config.INSTANCE_ID}`);
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.variables).toHaveLength(2);
      expect(body.variables[0]).toMatchObject({ studyKey: "flu", key: "kitStock", type: "int", value: 250 });
      expect(body.variables[1]).toMatchObject({ key: "launch", type: "date", value: "2026-05-28T20:26:40Z" });
      expect(typeof body.variables[0].valueUpdatedAt).toBe("string");
    });

    it("shows one variable; 404 for an unknown variable or study; 400 for another instance", async () => {
      const res = await get(`${base}/flu/variables/kitStock`);
      expect(res.status).toBe(200);
      expect((await res.json()).variable).toMatchObject({ key: "kitStock", value: 250 });
      expect((await get(`${base}/flu/variables/nope`)).status).toBe(404);
      expect((await get(`${base}/nope/variables`)).status).toBe(404);
      expect((await get(`${base}/nope/variables/kitStock`)).status).toBe(404);
      expect((await get(`${base}/flu/variables?instanceID=elsewhere`)).status).toBe(400);
    });
  });
});
