import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { participantSessions, passwordResetTokens, profiles, users } from "@studyflow/db";
import { mintParticipantToken } from "@studyflow/domain/access";
import { renderMail } from "@studyflow/domain/outbox";
import {
  EMAIL_CHANGE_TOKEN_TTL_SECONDS,
  createAccountToken,
  peekAccountToken,
  verifyPassword,
} from "@studyflow/domain/participant-accounts";
import { STRONG_PASSWORD, bearer, caseRequest, participantUser, queuedMails, userRow } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);
const NEW_PASSWORD = "Lantern-meadow-orbit-42";
const EMAIL_CHANGE_ANSWER = "if the address can be used, a confirmation link has been sent to it";

const changePassword = (t: TestApp, body: unknown, token?: string) =>
  caseRequest(t, "POST", "/v1/user/password", body, token);
const changeEmail = (t: TestApp, body: unknown, token?: string) =>
  caseRequest(t, "POST", "/v1/user/change-account-email", body, token);

const getUser = (t: TestApp, token: string) => t.app.request("/v1/user", { headers: bearer(token) });

/** A user with two sign-in sessions and a token for each. */
async function userWithSessions(t: TestApp) {
  const user = await participantUser(t);
  const sessions = await t.database.db
    .insert(participantSessions)
    .values([0, 1].map(() => ({ userId: user.user.id, expiresAt: new Date(NOW + 86_400_000) })))
    .returning();
  const tokens = await Promise.all(
    sessions.map((session) =>
      mintParticipantToken({
        userId: user.user.id,
        tokenVersion: user.user.tokenVersion,
        secret: t.config.PARTICIPANT_JWT_SECRET,
        sessionId: session.id,
        now: NOW,
      }),
    ),
  );
  return { ...user, sessions, sessionTokens: tokens };
}

describe("/v1/user: password and sign-in address", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    t.setNow(NOW);
  });
  afterAll(async () => {
    await t.close();
  });

  describe("POST /v1/user/password", () => {
    it("sets the new password, signs out the other sessions only, retires reset links, mails a notice", async () => {
      const user = await userWithSessions(t);
      const [mine, theirs] = user.sessionTokens as [string, string];
      await createAccountToken(t.database.db, {
        userId: user.user.id,
        purpose: "password-reset",
        ttlSeconds: 3_600,
        now: new Date(NOW),
      });

      const res = await changePassword(t, { oldPassword: STRONG_PASSWORD, newPassword: NEW_PASSWORD }, mine);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ message: "password changed" });

      const after = await userRow(t, user.user.id);
      await expect(verifyPassword(after.passwordHash, NEW_PASSWORD)).resolves.toBe(true);
      expect(after.passwordChangedAt).toEqual(new Date(NOW));
      const sessions = await t.database.db
        .select()
        .from(participantSessions)
        .where(eq(participantSessions.userId, user.user.id));
      const byId = new Map(sessions.map((s) => [s.id, s]));
      expect(byId.get(user.sessions[0]!.id)!.revokedAt).toBeNull();
      expect(byId.get(user.sessions[1]!.id)!.revokedReason).toBe("password-change");
      await t.settle();
      expect((await getUser(t, mine)).status).toBe(200);
      expect((await getUser(t, theirs)).status).toBe(401);

      const resets = await t.database.db
        .select()
        .from(passwordResetTokens)
        .where(eq(passwordResetTokens.userId, user.user.id));
      expect(resets.every((r) => r.usedAt !== null)).toBe(true);
      const [notice] = await queuedMails(t, user.user.id, "password-changed");
      expect(notice).toMatchObject({ toAddress: user.user.email, status: "pending" });
    });

    it("a token without a session signs out everywhere, itself included", async () => {
      const user = await participantUser(t);
      const res = await changePassword(t, { oldPassword: STRONG_PASSWORD, newPassword: NEW_PASSWORD }, user.token);
      expect(res.status).toBe(200);
      expect((await userRow(t, user.user.id)).tokenVersion).toBe(user.user.tokenVersion + 1);
      expect((await getUser(t, user.token)).status).toBe(401);
    });

    it("a wrong old password is a 401 that changes nothing; the sixth wrong one within 15 minutes is a 429", async () => {
      const user = await participantUser(t);
      const before = await userRow(t, user.user.id);
      for (let i = 0; i < 5; i += 1) {
        const res = await changePassword(
          t,
          { oldPassword: `Wrong-guess-${i}-abcdef`, newPassword: NEW_PASSWORD },
          user.token,
        );
        expect(res.status).toBe(401);
        expect(await res.json()).toEqual({ error: "wrong password" });
      }
      const limited = await changePassword(t, { oldPassword: STRONG_PASSWORD, newPassword: NEW_PASSWORD }, user.token);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
      // the change-address route counts the same wrong passwords
      const alsoLimited = await changeEmail(
        t,
        { email: "elsewhere@example.org", password: STRONG_PASSWORD },
        user.token,
      );
      expect(alsoLimited.status).toBe(429);
      expect((await userRow(t, user.user.id)).passwordHash).toBe(before.passwordHash);
      expect(await queuedMails(t, user.user.id, "password-changed")).toHaveLength(0);
    });

    it("400 naming newPassword outside the policy, or a missing field; 401 without a token", async () => {
      const user = await participantUser(t);
      const weak = await changePassword(t, { oldPassword: STRONG_PASSWORD, newPassword: "abc" }, user.token);
      expect(weak.status).toBe(400);
      expect((await weak.json()).error).toMatch(/^newPassword: /);
      const missing = await changePassword(t, { newPassword: NEW_PASSWORD }, user.token);
      expect(missing.status).toBe(400);
      expect((await missing.json()).error).toMatch(/body\.oldPassword/);
      const anonymous = await changePassword(t, {
        oldPassword: STRONG_PASSWORD,
        newPassword: NEW_PASSWORD,
      });
      expect(anonymous.status).toBe(401);
      await expect(verifyPassword((await userRow(t, user.user.id)).passwordHash, STRONG_PASSWORD)).resolves.toBe(true);
    });
  });

  describe("POST /v1/user/change-account-email", () => {
    it("mails a change-email link to the new address and a notice to the confirmed old one; the account is unchanged", async () => {
      const user = await participantUser(t);
      await t.database.db
        .update(users)
        .set({ accountConfirmedAt: new Date(NOW - 1000) })
        .where(eq(users.id, user.user.id));
      const res = await changeEmail(t, { email: "  New.Address@Example.org ", password: STRONG_PASSWORD }, user.token);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { message: string; user: { account: { accountID: string } } };
      expect(body.message).toBe(EMAIL_CHANGE_ANSWER);
      expect(body.user.account.accountID).toBe(user.user.email);
      expect((await userRow(t, user.user.id)).email).toBe(user.user.email);

      const [verify] = await queuedMails(t, user.user.id, "email-change-verify");
      expect(verify).toMatchObject({ toAddress: "new.address@example.org", status: "pending" });
      const link = new URL(String(verify!.payload.verifyUrl));
      expect(`${link.origin}${link.pathname}`).toBe(t.config.VERIFY_EMAIL_URL);
      expect(verify!.payload.validForHours).toBe(EMAIL_CHANGE_TOKEN_TTL_SECONDS / 3600);
      const holder = await peekAccountToken(
        t.database.db,
        link.searchParams.get("token")!,
        ["change-email"],
        new Date(NOW),
      );
      expect(holder).toMatchObject({ userId: user.user.id, info: { newEmail: "new.address@example.org" } });
      expect(holder!.expiresAt).toEqual(new Date(NOW + EMAIL_CHANGE_TOKEN_TTL_SECONDS * 1000));
      const [notice] = await queuedMails(t, user.user.id, "email-change-requested");
      expect(notice).toMatchObject({ toAddress: user.user.email, payload: { newEmail: "new.address@example.org" } });

      const rendered = renderMail("email-change-verify", "en", verify!.payload);
      expect(rendered.text).toContain(String(verify!.payload.verifyUrl));
      expect(renderMail("email-change-requested", "de", notice!.payload).text).toContain("new.address@example.org");

      // a second request retires the first link
      const again = await changeEmail(t, { email: "third@example.org", password: STRONG_PASSWORD }, user.token);
      expect(again.status).toBe(200);
      expect(
        await peekAccountToken(t.database.db, link.searchParams.get("token")!, ["change-email"], new Date(NOW)),
      ).toBeNull();
    });

    it("an address another account holds gets the same answer, and no link goes out", async () => {
      const holder = await participantUser(t);
      const user = await participantUser(t);
      const res = await changeEmail(
        t,
        { email: holder.user.email.toUpperCase(), password: STRONG_PASSWORD },
        user.token,
      );
      expect(res.status).toBe(200);
      const body = (await res.json()) as { message: string; user: { id: string; account: { accountID: string } } };
      expect(body.message).toBe(EMAIL_CHANGE_ANSWER);
      expect(body.user.id).toBe(user.user.id);
      expect(JSON.stringify(body)).not.toContain(holder.user.id);
      expect(await queuedMails(t, user.user.id, "email-change-verify")).toHaveLength(0);
      const tokens = await t.database.db
        .select()
        .from(passwordResetTokens)
        .where(eq(passwordResetTokens.userId, user.user.id));
      expect(tokens).toHaveLength(0);
    });

    it("unconfirmed accounts get no notice at the old address", async () => {
      const user = await participantUser(t);
      const res = await changeEmail(t, { email: "fresh-address@example.org", password: STRONG_PASSWORD }, user.token);
      expect(res.status).toBe(200);
      expect(await queuedMails(t, user.user.id, "email-change-verify")).toHaveLength(1);
      expect(await queuedMails(t, user.user.id, "email-change-requested")).toHaveLength(0);
    });

    it("400 for a malformed or the same address, 401 for a wrong password or no token; nothing is sent", async () => {
      const user = await participantUser(t);
      const malformed = await changeEmail(t, { email: "not-an-address", password: STRONG_PASSWORD }, user.token);
      expect(malformed.status).toBe(400);
      expect((await malformed.json()).error).toMatch(/body\.email/);
      const same = await changeEmail(t, { email: user.user.email, password: STRONG_PASSWORD }, user.token);
      expect(same.status).toBe(400);
      expect(await same.json()).toEqual({ error: "email: this is already the account's address" });
      const wrong = await changeEmail(
        t,
        { email: "somewhere@example.org", password: "Not-my-password-123" },
        user.token,
      );
      expect(wrong.status).toBe(401);
      expect(await wrong.json()).toEqual({ error: "wrong password" });
      const anonymous = await changeEmail(t, {
        email: "somewhere@example.org",
        password: STRONG_PASSWORD,
      });
      expect(anonymous.status).toBe(401);
      expect(await queuedMails(t, user.user.id, "email-change-verify")).toHaveLength(0);
    });

    it("confirming the new address renames a main profile still named by the old address's blur; a renamed one keeps its name", async () => {
      const confirm = async (user: Awaited<ReturnType<typeof participantUser>>, newEmail: string) => {
        expect((await changeEmail(t, { email: newEmail, password: STRONG_PASSWORD }, user.token)).status).toBe(200);
        const [verify] = await queuedMails(t, user.user.id, "email-change-verify");
        const token = new URL(String(verify!.payload.verifyUrl)).searchParams.get("token");
        const verified = await caseRequest(t, "POST", "/v1/auth/verify-email", { token });
        expect(verified.status).toBe(200);
        return t.database.db
          .select()
          .from(profiles)
          .where(eq(profiles.userId, user.user.id))
          .orderBy(profiles.createdAt);
      };
      // as created at sign-up: the main profile named by the blurred address, a second one by its owner
      const blurred = await participantUser(t, [], "rosa.berg@example.org");
      await t.database.db.insert(profiles).values({ userId: blurred.user.id, alias: "r****@example.org" });
      const renamed = await confirm(blurred, "rosa@mail.example");
      expect(renamed.map((profile) => [profile.mainProfile, profile.alias])).toEqual([
        [true, "r****@mail.example"],
        [false, "r****@example.org"],
      ]);

      const named = await participantUser(t, ["Ik"], "jan@example.org");
      expect((await confirm(named, "jan@mail.example")).map((profile) => profile.alias)).toEqual(["Ik"]);
    });

    it("at most 5 address changes an hour per account", async () => {
      const user = await participantUser(t);
      for (let i = 0; i < 5; i += 1) {
        const res = await changeEmail(t, { email: `try-${i}@example.org`, password: STRONG_PASSWORD }, user.token);
        expect(res.status).toBe(200);
      }
      const limited = await changeEmail(t, { email: "try-6@example.org", password: STRONG_PASSWORD }, user.token);
      expect(limited.status).toBe(429);
      expect(await queuedMails(t, user.user.id, "email-change-verify")).toHaveLength(5);
    });
  });
});
