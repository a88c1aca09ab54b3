import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reports } from "@studyflow/db";
import {
  bearer,
  call,
  exp,
  num,
  onEvent,
  participantIdOf,
  participantUser,
  postJson,
  researcher,
  setupStudy,
  str,
} from "./fixtures";
import { caseResponse, caseSurvey, uploadSurvey } from "./survey-fixtures";
import { createTestApp, type TestApp } from "./test-app";

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);
const DAY = 86_400;

const ifThen = (condition: ReturnType<typeof call>, ...actions: ReturnType<typeof call>[]) =>
  call("IFTHEN", exp(condition), ...actions.map(exp));
const onSubmitOf = (surveyKey: string, ...actions: ReturnType<typeof call>[]) =>
  ifThen(
    call("and", exp(call("checkEventType", str("SUBMIT"))), exp(call("checkSurveyResponseKey", str(surveyKey)))),
    ...actions,
  );

/**
 * A study as case-editor-tools write one: entering assigns the intake and sets a linking code;
 * submitting the intake sets flags, writes a report with the answer and assigns the weekly survey;
 * each weekly submission writes a report of its own.
 */
const rules = [
  onEvent(
    "ENTER",
    call("ADD_NEW_SURVEY", str("intake"), num(0), exp(call("timestampWithOffset", num(30 * DAY))), str("prio")),
    call("SET_LINKING_CODE", str("panel"), str("PANEL-123")),
    call("SET_LINKING_CODE", str("lab"), str("LAB-9")),
  ),
  onSubmitOf(
    "intake",
    call("REMOVE_SURVEYS_BY_KEY", str("intake")),
    call("UPDATE_FLAG", str("ageGroup"), exp(call("getSelectedKeys", str("intake.Q1"), str("rg.scg")))),
    call("INIT_REPORT", str("intake-report")),
    call(
      "UPDATE_REPORT_DATA",
      str("intake-report"),
      str("ageGroup"),
      exp(call("getSelectedKeys", str("intake.Q1"), str("rg.scg"))),
    ),
    call("ADD_NEW_SURVEY", str("weekly"), num(0), num(0), str("normal")),
  ),
  onSubmitOf("weekly", call("INIT_REPORT", str("weekly-report"))),
];

const data = (study: string, path: string) => `/v1/study-service/participant-data/${study}/${path}`;
const q = encodeURIComponent;
/** A list of a JSON answer, typed as far as an assertion reads it. */
const rows = <T = Record<string, string>>(value: unknown) => value as T[];

describe("participant data (CASE participant-data routes)", () => {
  let t: TestApp;
  let study: Awaited<ReturnType<typeof setupStudy>>;
  let versions: { intake: string; weekly: string };
  /** A user whose main profile entered and submitted the intake (with a confidential item) and a weekly survey. */
  let alice: Awaited<ReturnType<typeof participantUser>>;
  /** Another user, entered too. */
  let bob: Awaited<ReturnType<typeof participantUser>>;

  const get = (path: string, token?: string) => t.app.request(path, { headers: token ? bearer(token) : {} });
  const json = async (res: Response) => (await res.json()) as Record<string, any>;

  async function enter(user: typeof alice, profileIndex = 0) {
    const res = await postJson(
      t,
      `/v1/study-service/events/flu/enter`,
      { profileID: user.profiles[profileIndex]!.id },
      user.token,
    );
    expect(res.status).toBe(200);
  }
  async function submit(user: typeof alice, response: Record<string, unknown>) {
    const res = await postJson(
      t,
      `/v1/study-service/events/flu/submit`,
      { profileID: user.profiles[0]!.id, response },
      user.token,
    );
    expect(res.status).toBe(200);
  }

  beforeAll(async () => {
    t = await createTestApp();
    t.setNow(NOW);
    study = await setupStudy(t, { key: "flu", rules });
    await setupStudy(t, { key: "closed", rules, status: "inactive" });
    const { token } = await researcher(t, "*", "manage-surveys");
    versions = {
      intake: await uploadSurvey(t, "flu", token, caseSurvey("intake")),
      weekly: await uploadSurvey(t, "flu", token, caseSurvey("weekly")),
    };
    alice = await participantUser(t, ["main", "child"]);
    bob = await participantUser(t, ["bob"]);
    await enter(alice);
    await enter(bob);
    const intake = caseResponse("intake", versions.intake, "2");
    await submit(alice, {
      ...intake,
      responses: [
        ...intake.responses,
        {
          key: "intake.Q9",
          confidentialMode: "replace",
          mapToKey: "contact",
          response: { key: "rg", items: [{ key: "email", value: "alice@example.org" }] },
        },
      ],
    });
    t.setNow(NOW + 1000);
    await submit(alice, caseResponse("weekly", versions.weekly, "1"));
    await submit(bob, caseResponse("intake", versions.intake, "3"));
  });
  afterAll(async () => {
    await t.close();
  });

  describe("surveys", () => {
    it("lists the surveys assigned to each own profile with the survey infos of their current versions", async () => {
      const res = await get(
        data("flu", `surveys?pids=${q(alice.profiles[0]!.id)},${q(alice.profiles[1]!.id)}`),
        alice.token,
      );
      expect(res.status).toBe(200);
      const body = await json(res);
      // the child profile never entered: it adds nothing
      expect(body.surveys).toEqual([
        {
          studyKey: "flu",
          surveyKey: "weekly",
          validFrom: 0,
          validUntil: 0,
          category: "normal",
          profileID: alice.profiles[0]!.id,
        },
      ]);
      expect(body.surveyInfos).toHaveLength(1);
      expect(body.surveyInfos[0]).toMatchObject({ surveyKey: "weekly", studyKey: "flu", versionID: versions.weekly });
      expect(body.surveyInfos[0].name).toEqual([
        { code: "en", parts: [{ str: "weekly survey" }] },
        { code: "de", parts: [{ str: "weekly Fragebogen" }] },
      ]);
      expect(body.surveyInfos[0].typicalDuration[0]).toEqual({ code: "en", parts: [{ str: "5 minutes" }] });
    });

    it("refuses the whole request when one pid is another user's, and reads nothing", async () => {
      const res = await get(
        data("flu", `surveys?pids=${q(alice.profiles[0]!.id)},${q(bob.profiles[0]!.id)}`),
        alice.token,
      );
      expect(res.status).toBe(403);
      const body = await json(res);
      expect(Object.keys(body)).toEqual(["error"]);
      expect(JSON.stringify(body)).not.toContain("weekly");
    });

    it("needs a token, pids, a known and active study", async () => {
      expect((await get(data("flu", `surveys?pids=${alice.profiles[0]!.id}`))).status).toBe(401);
      expect((await get(data("flu", `surveys?pids=${alice.profiles[0]!.id}`), "not-a-token")).status).toBe(401);
      const missing = await get(data("flu", "surveys"), alice.token);
      expect(missing.status).toBe(400);
      expect((await json(missing)).error).toMatch(/pids/);
      expect((await get(data("flu", "surveys?pids=a,,b"), alice.token)).status).toBe(400);
      const unknown = await get(data("nope", `surveys?pids=${alice.profiles[0]!.id}`), alice.token);
      expect(unknown.status).toBe(404);
      expect((await json(unknown)).error).toMatch(/study "nope" not found/);
      expect((await get(data("closed", `surveys?pids=${alice.profiles[0]!.id}`), alice.token)).status).toBe(409);
    });
  });

  describe("submission-history", () => {
    it("lists the latest submissions newest first with the infos of the versions submitted", async () => {
      const res = await get(data("flu", `submission-history?pids=${alice.profiles[0]!.id}&limit=10`), alice.token);
      expect(res.status).toBe(200);
      const { submissionHistory } = await json(res);
      expect(rows(submissionHistory.submissions).map((s) => [s.surveyKey, s.versionID, s.profileID])).toEqual([
        ["weekly", versions.weekly, alice.profiles[0]!.id],
        ["intake", versions.intake, alice.profiles[0]!.id],
      ]);
      expect(typeof submissionHistory.submissions[0].timestamp).toBe("number");
      expect(rows(submissionHistory.surveyInfos).map((i) => [i.surveyKey, i.versionID])).toEqual([
        ["weekly", versions.weekly],
        ["intake", versions.intake],
      ]);
      expect(submissionHistory.surveyInfos[1].description[0].parts[0].str).toBe("A few questions");
    });

    it("limits per profile, refuses a limit that is no number and another user's profile", async () => {
      const one = await json(
        await get(data("flu", `submission-history?pids=${alice.profiles[0]!.id}&limit=1`), alice.token),
      );
      expect(one.submissionHistory.submissions).toHaveLength(1);
      const bad = await get(data("flu", `submission-history?pids=${alice.profiles[0]!.id}&limit=ten`), alice.token);
      expect(bad.status).toBe(400);
      expect((await json(bad)).error).toMatch(/limit/);
      const foreign = await get(data("flu", `submission-history?pids=${bob.profiles[0]!.id}`), alice.token);
      expect(foreign.status).toBe(403);
      expect(JSON.stringify(await json(foreign))).not.toContain("intake");
      expect((await get(data("flu", `submission-history?pids=${alice.profiles[0]!.id}`))).status).toBe(401);
    });
  });

  describe("participant-state", () => {
    it("shows the state without linking codes", async () => {
      const res = await get(data("flu", `participant-state?pid=${alice.profiles[0]!.id}`), alice.token);
      expect(res.status).toBe(200);
      const { participant } = await json(res);
      expect(participant.participantId).toBe(participantIdOf(study, alice.profiles[0]!.id));
      expect(participant.studyStatus).toBe("active");
      expect(participant.flags).toEqual({ ageGroup: "2" });
      expect(participant.linkingCodes).toBeNull();
      expect(JSON.stringify(participant)).not.toContain("PANEL-123");
      expect(participant).not.toHaveProperty("hashedAccountID");
      expect(rows(participant.assignedSurveys).map((s) => s.surveyKey)).toEqual(["weekly"]);
      expect(participant.lastSubmissions).toHaveProperty("intake");
    });

    it("answers 404 for a profile that is no participant, 403 for another's, 401 without a token", async () => {
      expect((await get(data("flu", `participant-state?pid=${alice.profiles[1]!.id}`), alice.token)).status).toBe(404);
      expect((await get(data("flu", `participant-state?pid=${bob.profiles[0]!.id}`), alice.token)).status).toBe(403);
      expect((await get(data("flu", `participant-state?pid=${alice.profiles[0]!.id}`))).status).toBe(401);
      expect((await get(data("flu", "participant-state"), alice.token)).status).toBe(400);
    });
  });

  describe("linking-code", () => {
    it("reads one code by its key; an unknown key is empty", async () => {
      const res = await get(data("flu", `linking-code?pid=${alice.profiles[0]!.id}&key=panel`), alice.token);
      expect(res.status).toBe(200);
      expect(await json(res)).toEqual({ linkingCode: "PANEL-123" });
      const none = await get(data("flu", `linking-code?pid=${alice.profiles[0]!.id}&key=other`), alice.token);
      expect(await json(none)).toEqual({ linkingCode: "" });
    });

    it("needs the key, the user's own profile and a token", async () => {
      const noKey = await get(data("flu", `linking-code?pid=${alice.profiles[0]!.id}`), alice.token);
      expect(noKey.status).toBe(400);
      expect((await json(noKey)).error).toMatch(/key/);
      const foreign = await get(data("flu", `linking-code?pid=${bob.profiles[0]!.id}&key=panel`), alice.token);
      expect(foreign.status).toBe(403);
      expect(await foreign.text()).not.toContain("PANEL");
      expect((await get(data("flu", `linking-code?pid=${alice.profiles[0]!.id}&key=panel`))).status).toBe(401);
    });
  });

  describe("confidential-response", () => {
    it("lists the profile's own confidential answers under a key", async () => {
      const res = await get(data("flu", `confidential-response?pid=${alice.profiles[0]!.id}&key=contact`), alice.token);
      expect(res.status).toBe(200);
      const { confidentialResponse } = await json(res);
      expect(confidentialResponse).toHaveLength(1);
      expect(confidentialResponse[0]).toMatchObject({
        participantID: participantIdOf(study, alice.profiles[0]!.id),
        value: "alice@example.org",
      });
      expect(confidentialResponse[0].responseKey).toMatch(/rg\.email$/);
      // bob gave none
      const bobs = await json(
        await get(data("flu", `confidential-response?pid=${bob.profiles[0]!.id}&key=contact`), bob.token),
      );
      expect(bobs.confidentialResponse).toEqual([]);
    });

    it("needs a key, and never shows another user's", async () => {
      expect((await get(data("flu", `confidential-response?pid=${alice.profiles[0]!.id}`), alice.token)).status).toBe(
        400,
      );
      const foreign = await get(
        data("flu", `confidential-response?pid=${alice.profiles[0]!.id}&key=contact`),
        bob.token,
      );
      expect(foreign.status).toBe(403);
      expect(await foreign.text()).not.toContain("alice@example.org");
      expect((await get(data("flu", `confidential-response?pid=${alice.profiles[0]!.id}&key=contact`))).status).toBe(
        401,
      );
    });
  });

  describe("reports", () => {
    it("pages the profile's reports newest first, filtered as CASE filters", async () => {
      const res = await get(data("flu", `reports?pid=${alice.profiles[0]!.id}`), alice.token);
      expect(res.status).toBe(200);
      const body = await json(res);
      expect(rows(body.reports).map((r) => r.key)).toEqual(["weekly-report", "intake-report"]);
      expect(body.pagination).toEqual({ totalCount: 2, currentPage: 1, totalPages: 1, pageSize: 10 });
      const intake = body.reports[1];
      expect(intake.participantID).toBe(participantIdOf(study, alice.profiles[0]!.id));
      expect(intake.data).toEqual([{ key: "ageGroup", value: "2" }]);
      expect(intake.responseID).not.toBe("");

      const filter = q(
        JSON.stringify({ $and: [{ key: "intake-report" }, { timestamp: { $gte: 0, $lte: 4_000_000_000 } }] }),
      );
      const filtered = await json(
        await get(data("flu", `reports?pid=${alice.profiles[0]!.id}&filter=${filter}`), alice.token),
      );
      expect(rows(filtered.reports).map((r) => r.key)).toEqual(["intake-report"]);
      const nin = q(JSON.stringify({ key: { $nin: ["intake-report"] } }));
      const rest = await json(
        await get(data("flu", `reports?pid=${alice.profiles[0]!.id}&filter=${nin}`), alice.token),
      );
      expect(rows(rest.reports).map((r) => r.key)).toEqual(["weekly-report"]);
      const paged = await json(
        await get(data("flu", `reports?pid=${alice.profiles[0]!.id}&limit=1&page=2`), alice.token),
      );
      expect(rows(paged.reports).map((r) => r.key)).toEqual(["intake-report"]);
      expect(paged.pagination).toEqual({ totalCount: 2, currentPage: 2, totalPages: 2, pageSize: 1 });
    });

    it("never returns another participant's reports, whatever the filter names", async () => {
      const bobsId = participantIdOf(study, bob.profiles[0]!.id);
      const stored = await t.database.db.select().from(reports);
      expect(stored.some((row) => row.participantId === bobsId)).toBe(true);
      for (const filter of [
        { participantID: bobsId },
        { $or: [{ participantID: bobsId }, { key: "intake-report" }] },
      ]) {
        const res = await get(
          data("flu", `reports?pid=${alice.profiles[0]!.id}&filter=${q(JSON.stringify(filter))}`),
          alice.token,
        );
        expect(res.status).toBe(200);
        const body = await json(res);
        expect(rows(body.reports).every((r) => r.participantID !== bobsId)).toBe(true);
      }
    });

    it("refuses a bad filter naming it, an unknown study, another user's profile and no token", async () => {
      const badField = await get(
        data("flu", `reports?pid=${alice.profiles[0]!.id}&filter=${q('{"secret":1}')}`),
        alice.token,
      );
      expect(badField.status).toBe(400);
      expect((await json(badField)).error).toMatch(/filter: unknown field "secret"/);
      const badOp = await get(
        data("flu", `reports?pid=${alice.profiles[0]!.id}&filter=${q('{"key":{"$where":"1"}}')}`),
        alice.token,
      );
      expect(badOp.status).toBe(400);
      expect((await json(badOp)).error).toMatch(/\$where/);
      const notJson = await get(data("flu", `reports?pid=${alice.profiles[0]!.id}&filter=%7Bnope`), alice.token);
      expect(notJson.status).toBe(400);
      expect((await json(notJson)).error).toMatch(/filter/);
      expect((await get(data("nope", `reports?pid=${alice.profiles[0]!.id}`), alice.token)).status).toBe(404);
      expect((await get(data("flu", `reports?pid=${bob.profiles[0]!.id}`), alice.token)).status).toBe(403);
      expect((await get(data("flu", `reports?pid=${alice.profiles[0]!.id}`))).status).toBe(401);
    });
  });

  describe("responses", () => {
    it("pages the profile's responses to a survey, flattened", async () => {
      const res = await get(data("flu", `responses?pid=${alice.profiles[0]!.id}&surveyKey=intake`), alice.token);
      expect(res.status).toBe(200);
      const body = await json(res);
      expect(body.pagination.totalCount).toBe(1);
      expect(body.responses).toHaveLength(1);
      const row = body.responses[0];
      expect(row.participantID).toBe(participantIdOf(study, alice.profiles[0]!.id));
      expect(row.version).toBe(versions.intake);
      expect(row["intake.Q1"]).toBe("2");
      expect(row).not.toHaveProperty("accountID");
      // the confidential item is not among the responses
      expect(JSON.stringify(body)).not.toContain("alice@example.org");
    });

    it("keeps to the profile's own responses whatever the filter says", async () => {
      const bobsId = participantIdOf(study, bob.profiles[0]!.id);
      const filter = q(JSON.stringify({ $or: [{ participantID: bobsId }, { versionID: versions.intake }] }));
      const body = await json(
        await get(data("flu", `responses?pid=${alice.profiles[0]!.id}&surveyKey=intake&filter=${filter}`), alice.token),
      );
      expect(rows(body.responses).map((r) => r.participantID)).toEqual([participantIdOf(study, alice.profiles[0]!.id)]);
    });

    it("needs surveyKey, a valid filter and sort, the user's own profile and a token", async () => {
      const noSurvey = await get(data("flu", `responses?pid=${alice.profiles[0]!.id}`), alice.token);
      expect(noSurvey.status).toBe(400);
      expect((await json(noSurvey)).error).toMatch(/surveyKey/);
      const badSort = await get(
        data("flu", `responses?pid=${alice.profiles[0]!.id}&surveyKey=intake&sort=${q('{"nope":1}')}`),
        alice.token,
      );
      expect(badSort.status).toBe(400);
      expect((await json(badSort)).error).toMatch(/nope/);
      expect(
        (await get(data("flu", `responses?pid=${bob.profiles[0]!.id}&surveyKey=intake`), alice.token)).status,
      ).toBe(403);
      expect(
        (await get(data("nope", `responses?pid=${alice.profiles[0]!.id}&surveyKey=intake`), alice.token)).status,
      ).toBe(404);
      expect((await get(data("flu", `responses?pid=${alice.profiles[0]!.id}&surveyKey=intake`))).status).toBe(401);
    });
  });
});
