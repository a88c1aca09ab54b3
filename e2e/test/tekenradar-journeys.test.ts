import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { accountDeletions, outgoingMessages, users } from "@studyflow/db";
import { createTestApp, type TestApp } from "@studyflow/api/testing";
import { startWorkerBesideApi } from "@studyflow/worker/testing";
import { startCaseClient, type CaseAnswer, type CaseClient } from "./fixtures/tekenradar/case-client";
import { startMailbox, type CapturedMail, type Mailbox } from "./fixtures/tekenradar/mailbox";
import { seedTekenradarStudy } from "./fixtures/tekenradar/seed";
import {
  INTAKE,
  STUDY_KEY,
  TB_FLOW,
  choice,
  intakeItems,
  numberAnswer,
  surveyResponse,
  tbItems,
} from "./fixtures/tekenradar/study";

/**
 * tekenradar/participant-webapp's journeys replayed call by call against studyflow: the app's
 * paths, query strings and bodies (tekenradar-calls.json, its live request log), sent as the app
 * sends them (JSON as text/plain, see fixtures/tekenradar/case-client.ts) to the real app over
 * HTTP, with mail delivered by the worker's outbox to a real SMTP server. Each answer is read as
 * the app reads it: the status test it makes (`!== 200` or `> 201`) and the fields it uses.
 */

const INSTANCE_ID = "tekenradar";
/** Meets the app's own check (12+ characters, 3 of 4 classes: lib/password-checker.ts). */
const PASSWORD = "Tick-season-2026-dunes";
const DAY = 24 * 3600;

/** The app's session, as its next-auth jwt callback keeps it (auth.ts). */
interface AppSession {
  accessToken: string;
  refreshToken: string;
  expiresAt: number;
  accountConfirmed: boolean;
  lastOTP?: { email?: number; sms?: number };
}

/** What auth.ts's authorize functions and jwt callback take from a token answer. */
function signInAs(answer: CaseAnswer): AppSession & { userId: string; email: string; image: unknown } {
  const { user, token } = answer.body as {
    user: { id: string; account: { accountID: string; accountConfirmedAt: number }; profiles: { avatarID?: string }[] };
    token: { accessToken: string; refreshToken: string; expiresIn: number; lastOTP?: AppSession["lastOTP"] };
  };
  expect(user, "the app throws 'Unexpected response from server.' without user").toBeTruthy();
  expect(token, "the app throws 'Unexpected response from server.' without token").toBeTruthy();
  expect(typeof token.accessToken).toBe("string");
  expect(typeof token.refreshToken).toBe("string");
  expect(token.expiresIn).toBeGreaterThan(0);
  expect(user.profiles.length, "the app reads user.profiles[0].avatarID").toBeGreaterThan(0);
  return {
    userId: user.id,
    email: user.account.accountID,
    image: user.profiles[0]!.avatarID,
    accessToken: token.accessToken,
    refreshToken: token.refreshToken,
    expiresAt: Date.now() + token.expiresIn * 1000,
    accountConfirmed: user.account.accountConfirmedAt > 0,
    ...(token.lastOTP ? { lastOTP: token.lastOTP } : {}),
  };
}

/** proxy.ts: the dashboard needs an e-mail OTP younger than 24 h. */
const dashboardAllowed = (session: AppSession, nowMs = Date.now()) =>
  Boolean(session.lastOTP?.email && session.lastOTP.email * 1000 > nowMs - DAY * 1000);

/** The verification link's token (the app's page /link/verify-contact?token=…). */
function linkToken(mail: CapturedMail): string {
  const match = /https?:\/\/[^\s"'<>]*[?&]token=([A-Za-z0-9_.~-]+)/.exec(mail.text);
  if (!match) throw new Error(`no link with a token in: ${mail.text.slice(0, 2000)}`);
  return match[1]!;
}

const hasLinkToken = (mail: CapturedMail) => /https?:\/\/[^\s"'<>]*[?&]token=/.test(mail.text);

/** The six-digit code of an OTP mail, read from its body lines (not headers or MIME boundaries). */
function otpCode(mail: CapturedMail): string | undefined {
  const body = mail.text.slice(mail.text.search(/\r?\n\r?\n/));
  for (const line of body.split(/\r?\n/)) {
    if (line.startsWith("--") || /^[A-Za-z-]+: /.test(line)) continue;
    const match = /(?<![\w.-])(\d{6})(?![\w-]|\.\d)/.exec(line);
    if (match) return match[1];
  }
  return undefined;
}

const json = (value: unknown) => JSON.stringify(value);

describe("tekenradar participant app journeys, replayed call by call", () => {
  let t: TestApp;
  let worker: ReturnType<typeof startWorkerBesideApi>;
  let mailbox: Mailbox;
  let api: CaseClient;
  let versions: { intakeVersion: string; tbFlowVersion: string };
  /** The app server's clock ahead of the real one (token expiry is simulated by moving it). */
  let clockOffsetMs = 0;

  beforeAll(async () => {
    mailbox = await startMailbox();
    const resultDir = await mkdtemp(path.join(tmpdir(), "sf-tekenradar-"));
    t = await createTestApp({ env: { RESULT_DIR: resultDir, INSTANCE_ID, TRUST_PROXY: "0" } });
    worker = startWorkerBesideApi(t, resultDir, {
      mail: { smtpUrl: mailbox.url, from: "Tekenradar <no-reply@tekenradar.test>", pollIntervalMs: 100 },
    });
    versions = await seedTekenradarStudy(t.database.db);
    api = await startCaseClient(t.app);
  });
  beforeEach(() => {
    t.setNow(Date.now() + clockOffsetMs);
  });
  afterAll(async () => {
    await api?.close();
    await worker?.stop();
    await t?.close();
    await mailbox?.close();
  });

  /** A POST/PUT/DELETE with a JSON body, as fetchCASEParticipantAPI sends it. */
  const send = (method: string, pathname: string, body: unknown, accessToken?: string) =>
    api.call(pathname, accessToken, { method, body: json(body) });
  const get = (pathname: string, accessToken?: string) => api.call(pathname, accessToken);

  /**
   * The OTP page (auth/otp/page.tsx) as the real app renders it after a sign-in: twice, each render
   * calling requestOTP('email') (GET /v1/auth/otp?type=email) about 100 ms apart; the page shows
   * an error unless the answer is 200.
   */
  async function requestCodeAsThePageDoes(accessToken: string): Promise<CaseAnswer[]> {
    const answers: CaseAnswer[] = [];
    for (let render = 0; render < 2; render++) {
      if (render > 0) t.setNow(t.deps.clock() + 100);
      const answer = await get("/v1/auth/otp?type=email", accessToken);
      expect(answer.status, json(answer.body)).toBe(200);
      answers.push(answer);
    }
    return answers;
  }

  /** Codes mailed to the account so far (the outbox, so a mail not yet delivered counts too). */
  const codeMailsTo = async (userId: string) =>
    (
      await t.database.db
        .select({ id: outgoingMessages.id })
        .from(outgoingMessages)
        .where(and(eq(outgoingMessages.userId, userId), eq(outgoingMessages.template, "otp-code")))
    ).length;

  describe("sign up, verify, log in, OTP, dashboard, survey with prefill, submit, reports, renew, log out, delete", () => {
    const email = `pat-${Date.now().toString(36)}@example.nl`;
    let session: AppSession & { userId: string; email: string };
    let mainProfileId: string;

    it("signs up (POST /v1/auth/signup; the app tests status > 201) and logs in at once as signUpAction does", async () => {
      const signup = await send("POST", "/v1/auth/signup", {
        email,
        password: PASSWORD,
        infoCheck: "",
        preferredLanguage: "nl",
        instanceID: INSTANCE_ID,
      });
      expect(signup.status, json(signup.body)).toBe(200);
      expect(signup.json).toBe(true);

      const login = await send("POST", "/v1/auth/login", { email, password: PASSWORD, instanceID: INSTANCE_ID });
      expect(login.status, json(login.body)).toBe(200);
      session = signInAs(login);
      expect(session.email).toBe(email);
      expect(session.accountConfirmed).toBe(false);
      expect(dashboardAllowed(session)).toBe(false); // proxy.ts sends the user to /auth/otp

      // signup-form.tsx then turns the newsletter off (manageSubscription(false)); the app tests !== 200
      const preferences = await send(
        "PUT",
        "/v1/user/contact-preferences",
        { subscribedToNewsletter: false, toggleWeeklySubscription: undefined },
        session.accessToken,
      );
      expect(preferences.status, json(preferences.body)).toBe(200);
    });

    it("verifies the address with the mailed link (POST /v1/auth/verify-email {token}), then signs in with it as the page does", async () => {
      const mail = await mailbox.waitFor(email, hasLinkToken);
      const token = linkToken(mail);
      const verified = await send("POST", "/v1/auth/verify-email", { token });
      expect(verified.status, json(verified.body)).toBe(200);
      // token-verifier.tsx shows success unless the action returned an error
      expect(verified.body.error).toBeUndefined();

      // token-verification-success.tsx: a signed-in visitor is signed in again with the link's token
      // (AutoLogin → loginWithTempToken(token, "") → POST /v1/auth/login-with-temptoken with the
      // session's access token); on an error the page sends the visitor to /auth/login
      const relogin = await send("POST", "/v1/auth/login-with-temptoken", {
        tempToken: token,
        password: "",
        accessToken: session.accessToken,
      });
      expect(relogin.status, `login-with-temptoken after verify-email: ${json(relogin.body)}`).toBe(200);
      session = signInAs(relogin);
      expect(session.accountConfirmed).toBe(true);
      // as case-backend's: the mailed link proves the mailbox, so the dashboard opens without an OTP
      expect(dashboardAllowed(session)).toBe(true);
    });

    it("logs in with the password (another day), then OTP: GET /v1/auth/otp?type=email, the mailed code to POST /v1/auth/otp/verify", async () => {
      const login = await send("POST", "/v1/auth/login", { email, password: PASSWORD, instanceID: INSTANCE_ID });
      expect(login.status, json(login.body)).toBe(200);
      session = signInAs(login);
      expect(session.accountConfirmed).toBe(true);
      expect(dashboardAllowed(session)).toBe(false); // a password alone does not open the dashboard

      // The login page's redirect renders the OTP page twice (seen in the walk of the real app): two
      // GET /v1/auth/otp about 100 ms apart. As case-backend does, the second within 30 s of the
      // first is answered the same and mails nothing: one mail, one code.
      const before = mailbox.mails.length;
      const requests = await requestCodeAsThePageDoes(session.accessToken);
      expect(requests[1]).toEqual(requests[0]);
      const mail = await mailbox.waitFor(email, (m) => otpCode(m) !== undefined, before);
      expect(await codeMailsTo(session.userId)).toBe(1);

      const wrong = await send(
        "POST",
        "/v1/auth/otp/verify",
        { code: otpCode(mail) === "000000" ? "111111" : "000000" },
        session.accessToken,
      );
      expect(wrong.status).toBeGreaterThan(201);
      expect(typeof wrong.body.error).toBe("string");

      const verified = await send("POST", "/v1/auth/otp/verify", { code: otpCode(mail) }, session.accessToken);
      expect(verified.status, json(verified.body)).toBe(200);
      session = signInAs(verified);
      expect(dashboardAllowed(session)).toBe(true);
      expect(session.accountConfirmed).toBe(true);
    });

    it("signs in again within 10 minutes: two code requests again, one mail; 'send the code again' until refused, the page shows when to retry", async () => {
      // a second device a few minutes later: the login page, then the OTP page rendered twice
      const signInAt = Date.now() + 2 * 60_000;
      t.setNow(signInAt);
      const login = await send("POST", "/v1/auth/login", { email, password: PASSWORD, instanceID: INSTANCE_ID });
      expect(login.status, json(login.body)).toBe(200);
      const second = signInAs(login);
      const before = mailbox.mails.length;
      const requests = await requestCodeAsThePageDoes(second.accessToken);
      expect(requests[1]).toEqual(requests[0]);
      const first = await mailbox.waitFor(email, (m) => otpCode(m) !== undefined, before);
      expect(await codeMailsTo(second.userId)).toBe(2);

      // otp-form.tsx's "send the code again" (requestOTP('email')), pressed every 31 s: each mails a
      // code until the account's 10 in 15 minutes are used up
      let resent = 0;
      let refused: CaseAnswer | undefined;
      for (let press = 1; press <= 10 && !refused; press++) {
        t.setNow(signInAt + press * 31_000);
        const answer = await get("/v1/auth/otp?type=email", second.accessToken);
        if (answer.status === 200) resent += 1;
        else refused = answer;
      }
      expect(resent).toBe(8);
      expect(refused?.status).toBe(429);
      // what the page shows under its "resend failed" title: `${resp.status} - ${resp.body.error}`
      expect(`${refused!.status} - ${refused!.body.error}`).toMatch(
        /^429 - too many codes requested: try again in \d+ minutes?$/,
      );
      expect(await codeMailsTo(second.userId)).toBe(10);

      // the refusal ends no code: the first code of this sign-in still opens the dashboard
      const verified = await send("POST", "/v1/auth/otp/verify", { code: otpCode(first) }, second.accessToken);
      expect(verified.status, json(verified.body)).toBe(200);
      expect(dashboardAllowed(signInAs(verified), t.deps.clock())).toBe(true);
      t.setNow(Date.now());
    });

    it("renders the dashboard: GET /v1/user, the active studies, the participating studies; enters the default study", async () => {
      const user = await get("/v1/user", session.accessToken);
      expect(user.status, json(user.body)).toBe(200);
      const profiles = user.body.user.profiles as {
        id: string;
        mainProfile: boolean;
        alias: string;
        avatarID: string;
      }[];
      expect(profiles).toHaveLength(1);
      expect(profiles[0]!.mainProfile).toBe(true);
      mainProfileId = profiles[0]!.id;
      expect(user.body.user.account.accountID).toBe(email);
      expect(user.body.user.account.accountConfirmedAt).toBeGreaterThan(0);
      expect(user.body.user.contactPreferences).toBeTypeOf("object");
      expect(JSON.stringify(user.body)).not.toMatch(/argon2|passwordHash/i);

      // ensureUserIsInAllDefaultStudies: both lists, then enter every profile missing from a default study
      const active = await get(`/v1/study-service/studies?status=active&instanceID=${INSTANCE_ID}`);
      expect(active.status, json(active.body)).toBe(200);
      const studies = active.body.studies as { key: string; props: { systemDefaultStudy?: boolean } }[];
      const tekenradar = studies.find((s) => s.key === STUDY_KEY);
      expect(tekenradar).toBeDefined();
      expect(tekenradar!.props.systemDefaultStudy, "the app enters only studies marked systemDefaultStudy").toBe(true);
      expect(JSON.stringify(active.body)).not.toContain("secret");

      const participating = await get("/v1/study-service/studies/participating", session.accessToken);
      expect(participating.status, json(participating.body)).toBe(200);
      expect(participating.body.studies).toEqual([]);

      const entered = await send(
        "POST",
        `/v1/study-service/events/${STUDY_KEY}/enter`,
        { studyKey: STUDY_KEY, profileID: mainProfileId },
        session.accessToken,
      );
      expect(entered.status, json(entered.body)).toBe(200);

      const after = await get("/v1/study-service/studies/participating", session.accessToken);
      expect(after.status).toBe(200);
      const mine = (after.body.studies as { key: string; profileIds: string[] }[]).find((s) => s.key === STUDY_KEY);
      expect(mine?.profileIds).toEqual([mainProfileId]);
    });

    it("lists the assigned surveys with their infos and the (empty) submission history", async () => {
      const surveys = await get(
        `/v1/study-service/participant-data/${STUDY_KEY}/surveys?pids=${mainProfileId}`,
        session.accessToken,
      );
      expect(surveys.status, json(surveys.body)).toBe(200);
      const assigned = surveys.body.surveys as {
        surveyKey: string;
        category: string;
        profileID: string;
        studyKey: string;
      }[];
      // survey-list.tsx: category "optional" is optional, everything else required
      expect(assigned.filter((s) => s.category !== "optional").map((s) => s.surveyKey)).toEqual([INTAKE]);
      expect(assigned.filter((s) => s.category === "optional").map((s) => s.surveyKey)).toEqual([TB_FLOW]);
      expect(new Set(assigned.map((s) => s.profileID))).toEqual(new Set([mainProfileId]));
      const infos = surveys.body.surveyInfos as {
        surveyKey: string;
        name: { code: string; parts: { str: string }[] }[];
      }[];
      const intakeInfo = infos.find((info) => info.surveyKey === INTAKE);
      expect(
        intakeInfo?.name
          .find((n) => n.code === "nl")
          ?.parts.map((p) => p.str)
          .join(""),
      ).toBe("Vragenlijst bij aanmelding");

      const history = await get(
        `/v1/study-service/participant-data/${STUDY_KEY}/submission-history?pids=${mainProfileId}&limit=100`,
        session.accessToken,
      );
      expect(history.status, json(history.body)).toBe(200);
      expect(history.body.submissionHistory.submissions ?? []).toEqual([]);
    });

    it("opens the intake with its context and prefill (GET …/participant-data/{k}/survey/{s}?pid=)", async () => {
      const answer = await get(
        `/v1/study-service/participant-data/${STUDY_KEY}/survey/${INTAKE}?pid=${mainProfileId}`,
        session.accessToken,
      );
      expect(answer.status, json(answer.body)).toBe(200);
      const { survey, context, prefill } = answer.body.surveyWithContext;
      expect(survey.surveyDefinition.key).toBe(INTAKE);
      expect(survey.versionId).toBe(versions.intakeVersion);
      expect(survey.prefillRules ?? null).toBeNull(); // rules are not handed to the participant
      expect(context.participantFlags).toMatchObject({ tbReports: "0" });
      expect(context.mode).toBe("tekenradar");
      const prefilled = prefill.responses as { key: string; response: unknown }[];
      expect(prefilled.map((r) => r.key)).toEqual([intakeItems.livesInNL]); // no earlier intake; removed item dropped
      expect(prefilled[0]!.response).toMatchObject({ key: "rg", items: [{ key: "scg", items: [{ key: "ja" }] }] });
    });

    it("submits the intake (POST …/events/{k}/submit) and reads the assigned surveys for an immediate one", async () => {
      const now = Math.floor(Date.now() / 1000);
      const response = surveyResponse(
        INTAKE,
        versions.intakeVersion,
        [
          choice(intakeItems.ageGroup, "2"),
          choice(intakeItems.livesInNL, "ja"),
          numberAnswer(intakeItems.bitesLastYear, 3),
        ],
        now,
      );
      const submitted = await send(
        "POST",
        `/v1/study-service/events/${STUDY_KEY}/submit`,
        { studyKey: STUDY_KEY, profileID: mainProfileId, response },
        session.accessToken,
      );
      expect(submitted.status, json(submitted.body)).toBe(200);
      const assigned = submitted.body.assignedSurveys as { surveyKey: string; category: string }[];
      expect(assigned.map((s) => [s.surveyKey, s.category]).sort()).toEqual([
        [INTAKE, "optional"],
        [TB_FLOW, "optional"],
      ]);
      expect(assigned.filter((s) => s.category === "immediate")).toEqual([]); // back to the dashboard

      const history = await get(
        `/v1/study-service/participant-data/${STUDY_KEY}/submission-history?pids=${mainProfileId}&limit=100`,
        session.accessToken,
      );
      expect(history.status).toBe(200);
      const submissions = history.body.submissionHistory.submissions as {
        profileID: string;
        surveyKey: string;
        versionID: string;
        timestamp: number;
      }[];
      expect(submissions).toHaveLength(1);
      expect(submissions[0]).toMatchObject({
        profileID: mainProfileId,
        surveyKey: INTAKE,
        versionID: versions.intakeVersion,
      });
    });

    it("opens the intake again: the prefill repeats the last answer (PREFILL_ITEM_WITH_LAST_RESPONSE)", async () => {
      const answer = await get(
        `/v1/study-service/participant-data/${STUDY_KEY}/survey/${INTAKE}?pid=${mainProfileId}`,
        session.accessToken,
      );
      expect(answer.status, json(answer.body)).toBe(200);
      const { context, prefill } = answer.body.surveyWithContext;
      expect(context.participantFlags).toMatchObject({ intakeDone: "yes", ageGroup: "2" });
      const byKey = new Map(
        (prefill.responses as { key: string; response: unknown }[]).map((r) => [r.key, r.response]),
      );
      expect(byKey.get(intakeItems.ageGroup)).toMatchObject({
        key: "rg",
        items: [{ key: "scg", items: [{ key: "2" }] }],
      });
      expect(byKey.has(intakeItems.livesInNL)).toBe(true);
    });

    it("reports a tick bite (TBflow with a number prefill) and reads the reports as the report history does", async () => {
      const opened = await get(
        `/v1/study-service/participant-data/${STUDY_KEY}/survey/${TB_FLOW}?pid=${mainProfileId}`,
        session.accessToken,
      );
      expect(opened.status, json(opened.body)).toBe(200);
      const count = (
        opened.body.surveyWithContext.prefill.responses as {
          key: string;
          response: { items: { key: string; value: string }[] };
        }[]
      ).find((r) => r.key === tbItems.count);
      expect(Number(count?.response.items[0]?.value)).toBe(1);

      const now = Math.floor(Date.now() / 1000);
      const response = surveyResponse(
        TB_FLOW,
        versions.tbFlowVersion,
        [choice(tbItems.environment, "a"), choice(tbItems.activity, "b"), numberAnswer(tbItems.count, 2)],
        now,
      );
      const submitted = await send(
        "POST",
        `/v1/study-service/events/${STUDY_KEY}/submit`,
        { studyKey: STUDY_KEY, profileID: mainProfileId, response },
        session.accessToken,
      );
      expect(submitted.status, json(submitted.body)).toBe(200);

      // report-history-client.tsx → /api/reports/{pid} → getReports: pid, limit, page, filter
      const filter = JSON.stringify({ key: { $in: ["TB", "EM", "LB", "chronic", "Fever"] } });
      const search = new URLSearchParams({ pid: mainProfileId, limit: "25", page: "1", filter });
      const reports = await get(
        `/v1/study-service/participant-data/${STUDY_KEY}/reports?${search.toString()}`,
        session.accessToken,
      );
      expect(reports.status, json(reports.body)).toBe(200);
      expect(reports.body.reports).toHaveLength(1);
      const [report] = reports.body.reports as {
        id: string;
        key: string;
        participantID: string;
        timestamp: number;
        data: { key: string; value: string; dtype?: string }[];
      }[];
      expect(report!.key).toBe("TB");
      expect(typeof report!.id).toBe("string");
      expect(Math.abs(report!.timestamp - now)).toBeLessThan(120);
      const data = Object.fromEntries(report!.data.map((d) => [d.key, d.value]));
      expect(data).toEqual({ environment: "a", activity: "b", count: "2" });
      expect(reports.body.pagination).toMatchObject({ totalCount: 1, currentPage: 1, pageSize: 25, totalPages: 1 });

      // getReportsByKey: {$and: [{key}, {timestamp: {$gte, $lte}}]}; and the excluding filter {key: {$nin}}
      const byKey = JSON.stringify({ $and: [{ key: "TB" }, { timestamp: { $gte: now - 3600, $lte: now + 3600 } }] });
      const inWindow = await get(
        `/v1/study-service/participant-data/${STUDY_KEY}/reports?${new URLSearchParams({ pid: mainProfileId, limit: "100", page: "1", filter: byKey }).toString()}`,
        session.accessToken,
      );
      expect(inWindow.status, json(inWindow.body)).toBe(200);
      expect(inWindow.body.reports).toHaveLength(1);
      const excluding = JSON.stringify({ key: { $nin: ["TB"] } });
      const none = await get(
        `/v1/study-service/participant-data/${STUDY_KEY}/reports?${new URLSearchParams({ pid: mainProfileId, limit: "100", page: "1", filter: excluding }).toString()}`,
        session.accessToken,
      );
      expect(none.status, json(none.body)).toBe(200);
      expect(none.body.reports ?? []).toEqual([]);
    });

    it("renews an expired access token (POST /v1/auth/token/renew, Bearer = the expired token) and keeps the OTP", async () => {
      const expired = session.accessToken;
      clockOffsetMs = session.expiresAt - Date.now() + 60_000;
      t.setNow(Date.now() + clockOffsetMs);
      const refused = await get("/v1/user", expired);
      expect(refused.status).toBe(401);

      const renewed = await send("POST", "/v1/auth/token/renew", { refreshToken: session.refreshToken }, expired);
      expect(renewed.status, json(renewed.body)).toBe(200);
      const next = signInAs(renewed);
      expect(next.refreshToken).not.toBe(session.refreshToken); // rotated
      expect(next.accountConfirmed).toBe(true);
      // the jwt callback replaces lastOTP with the renewal's: the dashboard must stay open
      expect(next.lastOTP?.email).toBe(session.lastOTP?.email);
      session = next;
      const user = await get("/v1/user", session.accessToken);
      expect(user.status).toBe(200);
      // back to the real time for the steps that compare it with the database's
      clockOffsetMs = 0;
    });

    it("logs out (POST /v1/auth/logout, no body; the app tests status > 201 and reads JSON): the token stops working", async () => {
      const out = await api.call("/v1/auth/logout", session.accessToken, { method: "POST" });
      expect(out.status, json(out.body)).toBe(200);
      expect(out.json).toBe(true);
      expect((await get("/v1/user", session.accessToken)).status).toBe(401);
      const renewal = await send(
        "POST",
        "/v1/auth/token/renew",
        { refreshToken: session.refreshToken },
        session.accessToken,
      );
      expect(renewal.status).toBe(401);
    });

    it("deletes the account (DELETE /v1/user {exitSurveyResponse}) after a fresh sign-in; the participant leaves", async () => {
      const login = await send("POST", "/v1/auth/login", { email, password: PASSWORD, instanceID: INSTANCE_ID });
      expect(login.status, json(login.body)).toBe(200);
      session = signInAs(login);

      const deleted = await send("DELETE", "/v1/user", { exitSurveyResponse: undefined }, session.accessToken);
      expect(deleted.status, json(deleted.body)).toBe(200);
      expect(deleted.json).toBe(true);
      // deleteAccount then calls logout('/'): signOut's event posts /v1/auth/logout with the same token.
      // Every session has ended with the deletion; the genuine token signs out of nothing: 200, as on case-backend.
      const out = await api.call("/v1/auth/logout", session.accessToken, { method: "POST" });
      expect(out.status, json(out)).toBe(200);

      const again = await send("POST", "/v1/auth/login", { email, password: PASSWORD, instanceID: INSTANCE_ID });
      expect(again.status).toBe(401);

      // the worker finishes the deletion: the account is gone
      const deadline = Date.now() + 20_000;
      let remaining = 1;
      while (Date.now() < deadline) {
        remaining = (await t.database.db.select({ id: users.id }).from(users).where(eq(users.email, email))).length;
        if (remaining === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const deletions = await t.database.db.select().from(accountDeletions);
      expect(remaining, json(deletions)).toBe(0);
    });
  });

  describe("anonymous report (/melden): temporary participant, survey, submit, then merge after sign-up", () => {
    const email = `anon-${Date.now().toString(36)}@example.nl`;
    let tempParticipantId: string;

    it("loads the report survey on the first visit, without a temporary participant (GET …/temp-participant/survey, no pid)", async () => {
      // getSurveyWithContextForTemporaryParticipant: pid only when the temp-participant cookie exists
      const search = new URLSearchParams({ instanceID: INSTANCE_ID, studyKey: STUDY_KEY, surveyKey: TB_FLOW });
      const answer = await get(`/v1/study-service/temp-participant/survey?${search.toString()}`);
      expect(answer.status, json(answer.body)).toBe(200);
      const { survey, prefill } = answer.body.surveyWithContext;
      expect(survey.surveyDefinition.key).toBe(TB_FLOW);
      expect(survey.versionId).toBe(versions.tbFlowVersion);
      const count = (prefill.responses as { key: string; response: { items: { value: string }[] } }[]).find(
        (r) => r.key === tbItems.count,
      );
      expect(Number(count?.response.items[0]?.value)).toBe(1);

      // the intake is for active participants only
      const intake = await get(
        `/v1/study-service/temp-participant/survey?${new URLSearchParams({ instanceID: INSTANCE_ID, studyKey: STUDY_KEY, surveyKey: INTAKE }).toString()}`,
      );
      expect(intake.status).toBeGreaterThanOrEqual(400);
      expect(intake.status).toBeLessThan(500);
    });

    it("registers a temporary participant on submit (POST …/temp-participant/register {studyKey, instanceId}; the app tests !== 200)", async () => {
      const registered = await send("POST", "/v1/study-service/temp-participant/register", {
        studyKey: STUDY_KEY,
        instanceId: INSTANCE_ID,
      });
      expect(registered.status, json(registered.body)).toBe(200);
      tempParticipantId = registered.body.participant.participantId;
      expect(typeof tempParticipantId).toBe("string");

      // a later visit sends the cookie's pid
      const search = new URLSearchParams({
        instanceID: INSTANCE_ID,
        studyKey: STUDY_KEY,
        surveyKey: TB_FLOW,
        pid: tempParticipantId,
      });
      const again = await get(`/v1/study-service/temp-participant/survey?${search.toString()}`);
      expect(again.status, json(again.body)).toBe(200);
      expect(again.body.surveyWithContext.survey.surveyDefinition.key).toBe(TB_FLOW);
    });

    it("submits the report (POST …/temp-participant/submit-response {studyKey, instanceId, pid, response})", async () => {
      const now = Math.floor(Date.now() / 1000);
      const response = surveyResponse(
        TB_FLOW,
        versions.tbFlowVersion,
        [choice(tbItems.environment, "d"), choice(tbItems.activity, "b"), numberAnswer(tbItems.count, 1)],
        now,
      );
      const submitted = await send("POST", "/v1/study-service/temp-participant/submit-response", {
        studyKey: STUDY_KEY,
        instanceId: INSTANCE_ID,
        pid: tempParticipantId,
        response,
      });
      expect(submitted.status, json(submitted.body)).toBe(200);
      expect(Array.isArray(submitted.body.assignedSurveys ?? [])).toBe(true);
    });

    it("signs up, enters the default study and merges the report into the main profile; the report shows", async () => {
      const signup = await send("POST", "/v1/auth/signup", {
        email,
        password: PASSWORD,
        infoCheck: "",
        preferredLanguage: "nl",
        instanceID: INSTANCE_ID,
      });
      expect(signup.status, json(signup.body)).toBe(200);
      const login = await send("POST", "/v1/auth/login", { email, password: PASSWORD, instanceID: INSTANCE_ID });
      expect(login.status, json(login.body)).toBe(200);
      const session = signInAs(login);
      const user = await get("/v1/user", session.accessToken);
      const profileId = (user.body.user.profiles as { id: string }[])[0]!.id;

      // melden/page.tsx: ensureUserIsInAllDefaultStudies, then MergeRedirect → merge
      const entered = await send(
        "POST",
        `/v1/study-service/events/${STUDY_KEY}/enter`,
        { studyKey: STUDY_KEY, profileID: profileId },
        session.accessToken,
      );
      expect(entered.status, json(entered.body)).toBe(200);
      const merged = await send(
        "POST",
        `/v1/study-service/events/${STUDY_KEY}/merge-temporary-participant`,
        { profileID: profileId, temporaryParticipantID: tempParticipantId },
        session.accessToken,
      );
      expect(merged.status, json(merged.body)).toBe(200);

      const filter = JSON.stringify({ key: { $in: ["TB", "EM", "LB", "chronic", "Fever"] } });
      const reports = await get(
        `/v1/study-service/participant-data/${STUDY_KEY}/reports?${new URLSearchParams({ pid: profileId, limit: "25", page: "1", filter }).toString()}`,
        session.accessToken,
      );
      expect(reports.status, json(reports.body)).toBe(200);
      const keys = (reports.body.reports as { key: string; data: { key: string; value: string }[] }[]).map((r) => [
        r.key,
        r.data.find((d) => d.key === "environment")?.value,
      ]);
      expect(keys).toEqual([["TB", "d"]]);

      // a merged temporary participant cannot be merged or used again
      const twice = await send(
        "POST",
        `/v1/study-service/events/${STUDY_KEY}/merge-temporary-participant`,
        { profileID: profileId, temporaryParticipantID: tempParticipantId },
        session.accessToken,
      );
      expect(twice.status).toBeGreaterThanOrEqual(400);
      expect(twice.status).toBeLessThan(500);
    });
  });

  describe("profiles: a child's profile added, the main one edited, switching between them, the child's removed", () => {
    const email = `fam-${Date.now().toString(36)}@example.nl`;
    let session: AppSession & { userId: string; email: string };
    interface AppProfile {
      id: string;
      alias: string;
      avatarID: string;
      mainProfile: boolean;
      consentConfirmedAt?: number;
      createdAt?: number;
    }
    let main: AppProfile;
    let child: AppProfile;

    /** lib/server/data-fetching/user.ts: GET /v1/user, the app reads user.profiles. */
    const profilesOf = async (): Promise<AppProfile[]> => {
      const user = await get("/v1/user", session.accessToken);
      expect(user.status, json(user.body)).toBe(200);
      return user.body.user.profiles as AppProfile[];
    };
    /** profile-editor.tsx: save is enabled only with an alias and consent given. */
    const canSave = (profile: AppProfile) =>
      profile.alias !== "" && profile.consentConfirmedAt !== undefined && profile.consentConfirmedAt > 0;

    it("signs up as signUpAction does; the main profile has case-backend's alias and consent", async () => {
      const signedUpAt = Math.floor(t.deps.clock() / 1000);
      const signup = await send("POST", "/v1/auth/signup", {
        email,
        password: PASSWORD,
        infoCheck: "",
        preferredLanguage: "nl",
        instanceID: INSTANCE_ID,
      });
      expect(signup.status, json(signup.body)).toBe(200);
      const login = await send("POST", "/v1/auth/login", { email, password: PASSWORD, instanceID: INSTANCE_ID });
      expect(login.status, json(login.body)).toBe(200);
      session = signInAs(login);
      const off = await send(
        "PUT",
        "/v1/user/contact-preferences",
        { subscribedToNewsletter: false },
        session.accessToken,
      );
      expect(off.status, json(off.body)).toBe(200);

      const [first, ...others] = await profilesOf();
      expect(others).toEqual([]);
      main = first!;
      // profile-selector.tsx shows `${alias} (Ik)`: the blurred address, as case-backend names it
      expect(main.alias).toBe(`${email[0]}****@example.nl`);
      expect(main.mainProfile).toBe(true);
      expect(main.avatarID).toBe("default");
      expect(main.consentConfirmedAt).toBeGreaterThanOrEqual(signedUpAt);
      expect(main.consentConfirmedAt).toBeLessThan(signedUpAt + 120);
      expect(canSave(main), "the profile editor's save button").toBe(true);
      const entered = await send(
        "POST",
        `/v1/study-service/events/${STUDY_KEY}/enter`,
        { studyKey: STUDY_KEY, profileID: main.id },
        session.accessToken,
      );
      expect(entered.status, json(entered.body)).toBe(200);
    });

    it("adds a child's profile as the profile editor does (consent ticked: Date.now() milliseconds), then enters it", async () => {
      // profile-editor.tsx: a new profile starts as {id: '', avatarID: 'default', alias: ''}; ticking
      // consent sets consentConfirmedAt: Date.now(); addNewProfile posts JSON.stringify(profile)
      const tickedAt = t.deps.clock();
      const added = await send(
        "POST",
        "/v1/user/profiles",
        { id: "", avatarID: "default", alias: "Sam", consentConfirmedAt: tickedAt },
        session.accessToken,
      );
      expect(added.status, `addNewProfile: ${json(added.body)}`).toBe(200);
      child = added.body.profile as AppProfile;
      expect(child).toMatchObject({ alias: "Sam", avatarID: "default", mainProfile: false });
      expect(child.consentConfirmedAt).toBe(Math.floor(tickedAt / 1000));
      expect(child.id).not.toBe("");

      // then enterStudy(studyKey, resp.profile.id)
      const entered = await send(
        "POST",
        `/v1/study-service/events/${STUDY_KEY}/enter`,
        { studyKey: STUDY_KEY, profileID: child.id },
        session.accessToken,
      );
      expect(entered.status, json(entered.body)).toBe(200);
      const listed = await profilesOf();
      expect(listed.map((p) => p.id)).toEqual([main.id, child.id]);
      expect(listed[1]!.consentConfirmedAt).toBe(Math.floor(tickedAt / 1000));
    });

    it("edits the main profile: the profile as GET /v1/user gave it, a new alias and avatar, consent ticked again", async () => {
      const tickedAt = t.deps.clock();
      const updated = await send(
        "PUT",
        "/v1/user/profiles",
        { ...main, alias: "Pat", avatarID: "owl", consentConfirmedAt: tickedAt },
        session.accessToken,
      );
      expect(updated.status, `updateProfile: ${json(updated.body)}`).toBe(200);
      expect(updated.body.profile).toMatchObject({
        id: main.id,
        alias: "Pat",
        avatarID: "owl",
        mainProfile: true,
        consentConfirmedAt: Math.floor(tickedAt / 1000),
      });
      // unchanged as sent back (seconds) is fine too: the settings page saves what it read
      const again = await send("PUT", "/v1/user/profiles", updated.body.profile, session.accessToken);
      expect(again.status, json(again.body)).toBe(200);
      expect(again.body.profile).toEqual(updated.body.profile);
      main = updated.body.profile as AppProfile;
    });

    it("switches between the profiles (the selector's pid): each profile's surveys and participation, its own only", async () => {
      for (const profile of [main, child]) {
        const surveys = await get(
          `/v1/study-service/participant-data/${STUDY_KEY}/surveys?pids=${profile.id}`,
          session.accessToken,
        );
        expect(surveys.status, json(surveys.body)).toBe(200);
        const keys = (surveys.body.surveys as { surveyKey: string; profileID: string }[]).map((s) => s.profileID);
        expect(new Set(keys)).toEqual(new Set([profile.id]));
      }
      const participating = await get("/v1/study-service/studies/participating", session.accessToken);
      const mine = (participating.body.studies as { key: string; profileIds: string[] }[]).find(
        (s) => s.key === STUDY_KEY,
      );
      expect(new Set(mine?.profileIds)).toEqual(new Set([main.id, child.id]));
    });

    it("another account cannot edit, read or remove the child's profile", async () => {
      const otherEmail = `other-${Date.now().toString(36)}@example.nl`;
      await send("POST", "/v1/auth/signup", {
        email: otherEmail,
        password: PASSWORD,
        infoCheck: "",
        preferredLanguage: "nl",
        instanceID: INSTANCE_ID,
      });
      const other = signInAs(
        await send("POST", "/v1/auth/login", { email: otherEmail, password: PASSWORD, instanceID: INSTANCE_ID }),
      );
      const edit = await send(
        "PUT",
        "/v1/user/profiles",
        { ...child, alias: "taken", consentConfirmedAt: t.deps.clock() },
        other.accessToken,
      );
      expect(edit.status).toBe(404);
      const read = await get(
        `/v1/study-service/participant-data/${STUDY_KEY}/surveys?pids=${child.id}`,
        other.accessToken,
      );
      expect(read.status).not.toBe(200);
      const remove = await send("POST", "/v1/user/profiles/remove", { profileId: child.id }, other.accessToken);
      expect(remove.status).toBe(404);
      expect((await profilesOf()).find((p) => p.id === child.id)).toMatchObject({ alias: "Sam" });
    });

    it("removes the child's profile (POST /v1/user/profiles/remove {profileId}); the main one stays", async () => {
      const removed = await send("POST", "/v1/user/profiles/remove", { profileId: child.id }, session.accessToken);
      expect(removed.status, json(removed.body)).toBe(200);
      expect((await profilesOf()).map((p) => p.id)).toEqual([main.id]);
      const gone = await get(
        `/v1/study-service/participant-data/${STUDY_KEY}/surveys?pids=${child.id}`,
        session.accessToken,
      );
      expect(gone.status).not.toBe(200);
      const refused = await send("POST", "/v1/user/profiles/remove", { profileId: main.id }, session.accessToken);
      expect(refused.status).toBe(400);
      expect((await profilesOf()).map((p) => p.id)).toEqual([main.id]);
    });
  });

  describe("signing up again with one's own address: the app goes on, the account's settings stay", () => {
    const email = `again-${Date.now().toString(36)}@example.nl`;

    it("an owner subscribed to the newsletter signs up again; signUpAction signs in and turns it off; it stays on", async () => {
      const first = await send("POST", "/v1/auth/signup", {
        email,
        password: PASSWORD,
        infoCheck: "",
        preferredLanguage: "nl",
        instanceID: INSTANCE_ID,
      });
      expect(first.status).toBe(200);
      const owner = signInAs(
        await send("POST", "/v1/auth/login", { email, password: PASSWORD, instanceID: INSTANCE_ID }),
      );
      // manage-subscriptions-form.tsx: the owner subscribes in the settings
      const on = await send("PUT", "/v1/user/contact-preferences", { subscribedToNewsletter: true }, owner.accessToken);
      expect(on.status, json(on.body)).toBe(200);
      const before = await get("/v1/user", owner.accessToken);
      expect(before.body.user.contactPreferences.subscribedToNewsletter).toBe(true);

      // later, the sign-up form again with the same address and password (signup-form.tsx onSubmit)
      const again = await send("POST", "/v1/auth/signup", {
        email,
        password: PASSWORD,
        infoCheck: "",
        preferredLanguage: "en",
        instanceID: INSTANCE_ID,
      });
      expect(again.status, "signUpAction tests status > 201").toBe(200);
      expect(again.body).toEqual(first.body); // nothing tells a taken address from a new one
      const login = await send("POST", "/v1/auth/login", { email, password: PASSWORD, instanceID: INSTANCE_ID });
      expect(login.status, json(login.body)).toBe(200);
      const session = signInAs(login);
      const off = await send(
        "PUT",
        "/v1/user/contact-preferences",
        { subscribedToNewsletter: false },
        session.accessToken,
      );
      expect(off.status, "manageSubscription tests !== 200").toBe(200);

      const after = await get("/v1/user", session.accessToken);
      expect(after.status).toBe(200);
      expect(after.body.user.contactPreferences).toEqual(before.body.user.contactPreferences);
      expect(after.body.user.account.preferredLanguage).toBe(before.body.user.account.preferredLanguage);
      expect(after.body.user.profiles).toEqual(before.body.user.profiles);
      const [row] = await t.database.db.select().from(users).where(eq(users.email, email));
      expect(row!.subscribedToNewsletter).toBe(true);
    });
  });

  it("every call with a body went out as the app sends it: text/plain;charset=UTF-8, and none got a 5xx or 415", () => {
    const withBody = api.calls.filter((c) => c.method !== "GET" && c.url !== "/v1/auth/logout");
    expect(withBody.length).toBeGreaterThan(10);
    for (const c of withBody) expect(c.contentType, `${c.method} ${c.url}`).toBe("text/plain;charset=UTF-8");
    expect(api.calls.filter((c) => c.status >= 500 || c.status === 415)).toEqual([]);
  });
});
