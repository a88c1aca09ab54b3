import { randomBytes } from "node:crypto";
import { and, eq, isNull } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accountDeletions, participantSessions, passwordResetTokens, refreshTokens, users } from "@studyflow/db";
import { createAccountToken, initiatePasswordReset } from "@studyflow/domain/participant-accounts";
import { STRONG_PASSWORD, participantUser, queuedMails, userRow } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

/**
 * Mailed account links and sign-in sessions as a participant's attacker would use them: links
 * outliving a password reset or change, a signed-out access token at login-with-temptoken, a spent
 * refresh token renewing more than once, a wrong password at account deletion, a verification
 * link used twice.
 */

const NEW_PASSWORD = "Lantern-meadow-orbit-42";
const INVALID_VERIFICATION = { error: "invalid or expired verification token" };

interface Envelope {
  token: { accessToken: string; refreshToken: string; selectedProfile: string };
}

let addressCounter = 0;
/** Each request from its own client address, so the per-address limits of these routes stay out of the way. */
function freshAddress(): string {
  addressCounter += 1;
  return `198.51.${Math.floor(addressCounter / 250)}.${addressCounter % 250}`;
}

/** As the participant app sends it: JSON as text/plain. */
function call(t: TestApp, method: string, path: string, body?: unknown, token?: string) {
  const headers: Record<string, string> = { "x-forwarded-for": freshAddress() };
  if (body !== undefined) headers["content-type"] = "text/plain;charset=UTF-8";
  if (token) headers.authorization = `Bearer ${token}`;
  return t.app.request(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

describe("participant account links and sessions", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const now = () => new Date(t.deps.clock());
  const newAddress = () => `sec-${randomBytes(5).toString("hex")}@example.org`;

  async function login(email: string, password = STRONG_PASSWORD) {
    return call(t, "POST", "/v1/auth/login", { email, password });
  }

  async function signIn(email: string, password = STRONG_PASSWORD): Promise<Envelope> {
    const res = await login(email, password);
    expect(res.status).toBe(200);
    return (await res.json()) as Envelope;
  }

  /** An account whose address is not confirmed yet, so a verify link has something to change. */
  async function account() {
    const created = await participantUser(t, ["main"], newAddress());
    await t.database.db.update(users).set({ accountConfirmedAt: null }).where(eq(users.id, created.user.id));
    return created.user;
  }

  const link = (userId: string, purpose: "verify-email" | "survey-login" | "unsubscribe-newsletter", email?: string) =>
    createAccountToken(t.database.db, {
      userId,
      purpose,
      ttlSeconds: 86_400,
      now: now(),
      ...(email ? { info: { email } } : {}),
    });

  const tokenOf = (url: unknown) => new URL(String(url)).searchParams.get("token")!;

  const sessionsOf = (userId: string) =>
    t.database.db.select().from(participantSessions).where(eq(participantSessions.userId, userId));

  describe("a password reset or change retires every link that signs in or changes the account", () => {
    /**
     * Someone holding the session (and the password) asks to move the account to an address of
     * theirs; a verify link and a survey link are out too. Then the owner takes the account back.
     */
    async function linksOutstanding() {
      const owner = await account();
      const session = await signIn(owner.email);
      const attackerAddress = newAddress();
      const asked = await call(
        t,
        "POST",
        "/v1/user/change-account-email",
        { email: attackerAddress, password: STRONG_PASSWORD },
        session.token.accessToken,
      );
      expect(asked.status).toBe(200);
      const [changeMail] = await queuedMails(t, owner.id, "email-change-verify");
      expect(changeMail?.toAddress).toBe(attackerAddress);
      return {
        owner,
        attackerAddress,
        changeLink: tokenOf(changeMail!.payload.verifyUrl),
        verifyLink: await link(owner.id, "verify-email", owner.email),
        surveyLink: await link(owner.id, "survey-login"),
        unsubscribeLink: await link(owner.id, "unsubscribe-newsletter"),
      };
    }

    async function expectLinksDead(links: Awaited<ReturnType<typeof linksOutstanding>>, password: string) {
      const { owner, attackerAddress } = links;
      const before = await userRow(t, owner.id);
      const changed = await call(t, "POST", "/v1/auth/verify-email", { token: links.changeLink });
      expect(changed.status).toBe(401);
      expect(await changed.json()).toEqual(INVALID_VERIFICATION);
      const verified = await call(t, "POST", "/v1/auth/verify-email", { token: links.verifyLink });
      expect(verified.status).toBe(401);
      expect(await verified.json()).toEqual(INVALID_VERIFICATION);
      const survey = await call(t, "POST", "/v1/auth/login-with-temptoken", { tempToken: links.surveyLink, password });
      expect(survey.status).toBe(401);
      expect((await call(t, "POST", "/v1/auth/temptoken-info", { tempToken: links.surveyLink })).status).toBe(401);

      // nothing changed: the address is the owner's (confirmed only if the reset link confirmed it)
      const row = await userRow(t, owner.id);
      expect(row.email).toBe(owner.email);
      expect(row.accountConfirmedAt).toEqual(before.accountConfirmedAt);
      expect((await login(owner.email, password)).status).toBe(200);
      expect((await login(attackerAddress, password)).status).toBe(401);

      // a newsletter-unsubscribe link grants nothing else and stays usable
      expect((await call(t, "POST", "/v1/unsubscribe-newsletter", { token: links.unsubscribeLink })).status).toBe(200);
    }

    it("password reset: the change-email, verify and survey links of before answer 401; the owner signs in", async () => {
      const links = await linksOutstanding();
      const { token } = (await initiatePasswordReset(t.database.db, {
        email: links.owner.email,
        now: now(),
        ttlSeconds: 3600,
        resetUrl: "https://app.example.org/reset",
      }))!;
      const reset = await call(t, "POST", "/v1/password-reset/reset", { token, newPassword: NEW_PASSWORD });
      expect(reset.status).toBe(200);
      await expectLinksDead(links, NEW_PASSWORD);
    });

    it("password change: the same links answer 401; the owner signs in with the new password", async () => {
      const links = await linksOutstanding();
      const mine = await signIn(links.owner.email);
      const changed = await call(
        t,
        "POST",
        "/v1/user/password",
        { oldPassword: STRONG_PASSWORD, newPassword: NEW_PASSWORD },
        mine.token.accessToken,
      );
      expect(changed.status).toBe(200);
      await expectLinksDead(links, NEW_PASSWORD);
      expect((await userRow(t, links.owner.id)).accountConfirmedAt).toBeNull();
    });

    it("links asked for after the change work as before", async () => {
      const owner = await account();
      const mine = await signIn(owner.email);
      const changed = await call(
        t,
        "POST",
        "/v1/user/password",
        { oldPassword: STRONG_PASSWORD, newPassword: NEW_PASSWORD },
        mine.token.accessToken,
      );
      expect(changed.status).toBe(200);
      const verified = await call(t, "POST", "/v1/auth/verify-email", {
        token: await link(owner.id, "verify-email", owner.email),
      });
      expect(verified.status).toBe(200);
      const survey = await call(t, "POST", "/v1/auth/login-with-temptoken", {
        tempToken: await link(owner.id, "survey-login"),
        password: NEW_PASSWORD,
      });
      expect(survey.status).toBe(200);
    });
  });

  describe("login-with-temptoken takes an access token only as every participant route does", () => {
    it("a signed-out access token and a verification link open no session (401)", async () => {
      const owner = await account();
      const session = await signIn(owner.email);
      const verifyLink = await link(owner.id, "verify-email", owner.email);
      const logout = await call(t, "POST", "/v1/auth/logout", undefined, session.token.accessToken);
      expect(logout.status).toBe(200);
      const before = await sessionsOf(owner.id);

      const res = await call(t, "POST", "/v1/auth/login-with-temptoken", {
        tempToken: verifyLink,
        password: "",
        accessToken: session.token.accessToken,
      });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: "invalid access token" });
      const after = await sessionsOf(owner.id);
      expect(after).toHaveLength(before.length);
      expect(after.every((row) => row.revokedAt !== null)).toBe(true);
    });

    it("an access token of an older token version (before a password reset) is refused too", async () => {
      const owner = await account();
      const session = await signIn(owner.email);
      const surveyLink = await link(owner.id, "survey-login");
      const { token } = (await initiatePasswordReset(t.database.db, {
        email: owner.email,
        now: now(),
        ttlSeconds: 3600,
        resetUrl: "https://app.example.org/reset",
      }))!;
      expect((await call(t, "POST", "/v1/password-reset/reset", { token, newPassword: NEW_PASSWORD })).status).toBe(
        200,
      );
      const fresh = await link(owner.id, "survey-login");
      for (const tempToken of [surveyLink, fresh]) {
        const res = await call(t, "POST", "/v1/auth/login-with-temptoken", {
          tempToken,
          accessToken: session.token.accessToken,
        });
        expect(res.status).toBe(401);
      }
    });

    it("a session opened with a link is no recent sign-in: DELETE /v1/user {} is refused, the account stays", async () => {
      const owner = await account();
      const session = await signIn(owner.email);
      for (const body of [
        { tempToken: await link(owner.id, "verify-email", owner.email), accessToken: session.token.accessToken },
        { tempToken: await link(owner.id, "survey-login"), password: STRONG_PASSWORD },
      ]) {
        const opened = await call(t, "POST", "/v1/auth/login-with-temptoken", body);
        expect(opened.status).toBe(200);
        const linked = (await opened.json()) as Envelope;
        const refused = await call(t, "DELETE", "/v1/user", {}, linked.token.accessToken);
        expect(refused.status).toBe(401);
        expect(((await refused.json()) as { error: string }).error).toMatch(/recent sign-in/);
      }
      const row = await userRow(t, owner.id);
      expect(row.deletionRequestedAt).toBeNull();
      expect(await t.database.db.select().from(accountDeletions).where(eq(accountDeletions.userId, owner.id))).toEqual(
        [],
      );
      // the password sign-in's session is recent: it may
      const deleted = await call(t, "DELETE", "/v1/user", {}, session.token.accessToken);
      expect(deleted.status).toBe(200);
    });
  });

  describe("a spent refresh token has one successor", () => {
    const renew = (accessToken: string, refreshToken: string) =>
      call(t, "POST", "/v1/auth/token/renew", { refreshToken }, accessToken);

    const liveRefreshTokens = async (accessToken: string) => {
      const sessionId = (
        JSON.parse(Buffer.from(accessToken.split(".")[1]!, "base64url").toString("utf8")) as { sid: string }
      ).sid;
      return t.database.db
        .select()
        .from(refreshTokens)
        .where(and(eq(refreshTokens.sessionId, sessionId), isNull(refreshTokens.usedAt)));
    };

    it("renewed twice within the grace, it answers the same successor both times", async () => {
      const owner = await account();
      const session = await signIn(owner.email);
      const first = await renew(session.token.accessToken, session.token.refreshToken);
      const second = await renew(session.token.accessToken, session.token.refreshToken);
      expect([first.status, second.status]).toEqual([200, 200]);
      const [a, b] = [(await first.json()) as Envelope, (await second.json()) as Envelope];
      expect(a.token.refreshToken).not.toBe(session.token.refreshToken);
      expect(b.token.refreshToken).toBe(a.token.refreshToken);
      expect(await liveRefreshTokens(session.token.accessToken)).toHaveLength(1);
      // the successor renews on as usual
      const next = await renew(b.token.accessToken, b.token.refreshToken);
      expect(next.status).toBe(200);
      expect(await liveRefreshTokens(session.token.accessToken)).toHaveLength(1);
    });

    it("two renewals at the same moment get the same successor; one live refresh token remains", async () => {
      const owner = await account();
      const session = await signIn(owner.email);
      const answers = await Promise.all(
        [0, 1, 2].map(async () => renew(session.token.accessToken, session.token.refreshToken)),
      );
      expect(answers.map((res) => res.status)).toEqual([200, 200, 200]);
      const successors = new Set(
        await Promise.all(answers.map(async (res) => ((await res.json()) as Envelope).token.refreshToken)),
      );
      expect(successors.size).toBe(1);
      expect(await liveRefreshTokens(session.token.accessToken)).toHaveLength(1);
    });

    it("once its successor renewed, the spent token is a reuse even within the grace: the session ends", async () => {
      const owner = await account();
      const session = await signIn(owner.email);
      const renewed = (await (await renew(session.token.accessToken, session.token.refreshToken)).json()) as Envelope;
      const onward = await renew(renewed.token.accessToken, renewed.token.refreshToken);
      expect(onward.status).toBe(200);
      const reuse = await renew(session.token.accessToken, session.token.refreshToken);
      expect(reuse.status).toBe(401);
      expect(await reuse.json()).toEqual({ error: "refresh token already used: session ended, sign in again" });
      const [row] = await sessionsOf(owner.id);
      expect(row!.revokedReason).toBe("refresh-reuse");
      const latest = (await onward.json()) as Envelope;
      expect((await call(t, "GET", "/v1/user", undefined, latest.token.accessToken)).status).toBe(401);
    });
  });

  describe("DELETE /v1/user with a password in the body", () => {
    it("a wrong password is refused (401) even in a recent session, and nothing changes", async () => {
      const owner = await account();
      const session = await signIn(owner.email);
      const res = await call(
        t,
        "DELETE",
        "/v1/user",
        { password: "not-the-password-at-all" },
        session.token.accessToken,
      );
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: string }).error).toMatch(/wrong password/);
      const row = await userRow(t, owner.id);
      expect(row.deletionRequestedAt).toBeNull();
      expect(await t.database.db.select().from(accountDeletions).where(eq(accountDeletions.userId, owner.id))).toEqual(
        [],
      );
      expect((await call(t, "GET", "/v1/user", undefined, session.token.accessToken)).status).toBe(200);

      const right = await call(t, "DELETE", "/v1/user", { password: STRONG_PASSWORD }, session.token.accessToken);
      expect(right.status).toBe(200);
      expect((await userRow(t, owner.id)).deletionRequestedAt).not.toBeNull();
    });
  });

  describe("POST /v1/auth/verify-email", () => {
    it("confirms once with an answer of the confirmed address only; a used link repeats for two minutes, then answers as an unknown one", async () => {
      const owner = await account();
      const verifyLink = await link(owner.id, "verify-email", owner.email);
      const res = await call(t, "POST", "/v1/auth/verify-email", { token: verifyLink });
      expect(res.status).toBe(200);
      const confirmedAt = (await userRow(t, owner.id)).accountConfirmedAt!;
      const firstAnswer: unknown = await res.json();
      expect(firstAnswer).toEqual({
        user: {
          account: {
            type: "email",
            accountID: owner.email,
            accountConfirmedAt: Math.floor(confirmedAt.getTime() / 1000),
          },
        },
      });

      // the app's page renders again right after (and after its sign-in): the same answer, nothing written
      const repeated = await call(t, "POST", "/v1/auth/verify-email", { token: verifyLink });
      expect(repeated.status).toBe(200);
      expect(await repeated.json()).toEqual(firstAnswer);

      try {
        t.setNow(Date.now() + 121_000);
        const again = await call(t, "POST", "/v1/auth/verify-email", { token: verifyLink });
        const unknown = await call(t, "POST", "/v1/auth/verify-email", { token: "A".repeat(43) });
        expect(again.status).toBe(401);
        expect(unknown.status).toBe(401);
        expect(await again.json()).toEqual(await unknown.json());
        expect((await userRow(t, owner.id)).accountConfirmedAt).toEqual(confirmedAt);
      } finally {
        t.setNow(Date.now());
      }

      // the app signs in with the used link right after, from its live session
      const session = await signIn(owner.email);
      const relogin = await call(t, "POST", "/v1/auth/login-with-temptoken", {
        tempToken: verifyLink,
        password: "",
        accessToken: session.token.accessToken,
      });
      expect(relogin.status).toBe(200);
    });

    it("a change-email link used twice: the second answers 401 and changes nothing more", async () => {
      const owner = await account();
      const session = await signIn(owner.email);
      const target = newAddress();
      const asked = await call(
        t,
        "POST",
        "/v1/user/change-account-email",
        { email: target, password: STRONG_PASSWORD },
        session.token.accessToken,
      );
      expect(asked.status).toBe(200);
      const [mail] = await queuedMails(t, owner.id, "email-change-verify");
      const changeLink = tokenOf(mail!.payload.verifyUrl);
      const first = await call(t, "POST", "/v1/auth/verify-email", { token: changeLink });
      expect(first.status).toBe(200);
      expect(((await first.json()) as { user: { account: { accountID: string } } }).user.account.accountID).toBe(
        target,
      );
      const sessionsAfterFirst = await sessionsOf(owner.id);
      const second = await call(t, "POST", "/v1/auth/verify-email", { token: changeLink });
      expect(second.status).toBe(401);
      expect(await second.json()).toEqual(INVALID_VERIFICATION);
      expect((await userRow(t, owner.id)).email).toBe(target);
      expect(await sessionsOf(owner.id)).toEqual(sessionsAfterFirst);
    });

    it("of two requests with one link at the same moment, one confirms and the other repeats its answer", async () => {
      const owner = await account();
      const verifyLink = await link(owner.id, "verify-email", owner.email);
      const answers = await Promise.all(
        [0, 1].map(async () => call(t, "POST", "/v1/auth/verify-email", { token: verifyLink })),
      );
      expect(answers.map((res) => res.status)).toEqual([200, 200]);
      const [first, second] = (await Promise.all(answers.map((res) => res.json()))) as unknown[];
      expect(second).toEqual(first);
      const tokens = await t.database.db
        .select({ usedAt: passwordResetTokens.usedAt })
        .from(passwordResetTokens)
        .where(eq(passwordResetTokens.userId, owner.id));
      expect(tokens.filter((row) => row.usedAt !== null)).toHaveLength(1);
    });
  });
});
