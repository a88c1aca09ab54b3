import { randomBytes } from "node:crypto";
import { and, count, desc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outgoingMessages, participantSessions, profiles, refreshTokens, users } from "@studyflow/db";
import { mintParticipantToken } from "@studyflow/domain/access";
import { createAccountToken, hashPassword, initiatePasswordReset } from "@studyflow/domain/participant-accounts";
import { loadConfig } from "../src/config";
import { createTestApp, type TestApp } from "./test-app";

const PASSWORD = "harbour lights at dusk";

let addressCounter = 0;
function freshAddress(): string {
  addressCounter += 1;
  return `203.0.${Math.floor(addressCounter / 250)}.${addressCounter % 250}`;
}

interface CallOptions {
  token?: string;
  address?: string;
}

/** As the participant app sends it: JSON as text/plain, through one proxy (TRUST_PROXY=1). */
function call(t: TestApp, method: string, path: string, body?: unknown, options: CallOptions = {}) {
  const headers: Record<string, string> = {
    "x-forwarded-for": `10.0.0.1, ${options.address ?? freshAddress()}`,
  };
  if (body !== undefined) headers["content-type"] = "text/plain;charset=UTF-8";
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  return t.app.request(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

interface Envelope {
  token: {
    accessToken: string;
    refreshToken: string;
    expiresIn: number;
    selectedProfile: string;
    lastOTP: { email?: number };
  };
  user: { id: string; account: { accountID: string; accountConfirmedAt: number }; profiles: { id: string }[] };
}

describe("participant sign-in (/v1/auth)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const now = () => new Date(t.deps.clock());
  const newEmail = () => `p-${randomBytes(5).toString("hex")}@example.org`;

  async function createUser(options: { confirmed?: boolean } = {}) {
    const email = newEmail();
    const [user] = await t.database.db
      .insert(users)
      .values({
        email,
        passwordHash: await hashPassword(PASSWORD),
        accountConfirmedAt: options.confirmed === false ? null : new Date(),
      })
      .returning();
    await t.database.db.insert(profiles).values({ userId: user!.id, mainProfile: true });
    return { ...user!, email };
  }

  async function login(email: string, password = PASSWORD, address?: string) {
    return call(t, "POST", "/v1/auth/login", { email, password, instanceID: t.config.INSTANCE_ID }, { address });
  }

  async function signedIn() {
    const user = await createUser();
    const res = await login(user.email);
    expect(res.status).toBe(200);
    return { user, envelope: (await res.json()) as Envelope };
  }

  const studies = async (token: string, profileId: string) =>
    call(t, "GET", `/v1/study-service/participant/studies?profileID=${profileId}`, undefined, { token });

  async function mails(userId: string, template: string) {
    return t.database.db
      .select()
      .from(outgoingMessages)
      .where(and(eq(outgoingMessages.userId, userId), eq(outgoingMessages.template, template)))
      .orderBy(desc(outgoingMessages.createdAt));
  }

  describe("login", () => {
    it("answers the CASE envelope with a working token pair (text/plain body, instanceId in any case)", async () => {
      const user = await createUser();
      const res = await call(t, "POST", "/v1/auth/login", {
        EMAIL: ` ${user.email.toUpperCase()} `,
        password: PASSWORD,
        instanceId: t.config.INSTANCE_ID,
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as Envelope;
      expect(body.token.expiresIn).toBe(t.config.PARTICIPANT_ACCESS_TOKEN_TTL_SECONDS);
      expect(body.token.lastOTP).toEqual({});
      expect(body.user.account.accountID).toBe(user.email);
      expect(body.token.selectedProfile).toBe(body.user.profiles[0]!.id);
      expect((await studies(body.token.accessToken, body.token.selectedProfile)).status).toBe(200);
      const text = JSON.stringify(body);
      expect(text).not.toContain("argon2");
      expect(text).not.toMatch(/hash/i);
    });

    it("answers the account's profiles as GET /v1/user shows them: the main one first, then by creation", async () => {
      const user = await createUser();
      const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, seconds, 789));
      await t.database.db.insert(profiles).values([
        { userId: user.id, alias: "later", avatarId: "cat", createdAt: at(30), consentConfirmedAt: at(31) },
        { userId: user.id, alias: "earlier", avatarId: "dog", createdAt: at(10) },
      ]);
      const res = await login(user.email);
      expect(res.status).toBe(200);
      const body = (await res.json()) as Envelope;
      const aliases = (body.user.profiles as unknown as { alias: string }[]).map((profile) => profile.alias);
      expect(aliases).toEqual(["", "earlier", "later"]);
      const shown = await call(t, "GET", "/v1/user", undefined, { token: body.token.accessToken });
      expect({ user: body.user }).toEqual(await shown.json());
    });

    it("answers an unknown address and a wrong password alike, in similar time", async () => {
      const user = await createUser();
      const timed = async (email: string, password: string) => {
        const started = performance.now();
        const res = await login(email, password);
        return { status: res.status, body: await res.json(), ms: performance.now() - started };
      };
      await timed(newEmail(), "warm the dummy hash"); // first use makes the dummy hash
      // interleaved, medians of five: a loaded machine makes single timings noisy
      const unknowns: Awaited<ReturnType<typeof timed>>[] = [];
      const wrongs: Awaited<ReturnType<typeof timed>>[] = [];
      for (let i = 0; i < 5; i++) {
        unknowns.push(await timed(newEmail(), PASSWORD));
        wrongs.push(await timed(user.email, `not the password ${i}`));
      }
      const medianOf = (runs: { ms: number }[]) => runs.map((run) => run.ms).sort((x, y) => x - y)[2]!;
      const unknown = { ...unknowns[0]!, ms: medianOf(unknowns) };
      const wrong = { ...wrongs[0]!, ms: medianOf(wrongs) };
      expect(unknown.status).toBe(401);
      expect(wrong.status).toBe(401);
      expect(unknown.body).toEqual({ error: "invalid email or password" });
      expect(wrong.body).toEqual(unknown.body);
      // both verify one argon2 hash; neither is several times the other
      expect(Math.max(unknown.ms, wrong.ms) / Math.min(unknown.ms, wrong.ms)).toBeLessThan(3);
    });

    it("refuses another instance and missing fields with 400", async () => {
      const user = await createUser();
      expect(
        (await call(t, "POST", "/v1/auth/login", { email: user.email, password: PASSWORD, instanceID: "other" }))
          .status,
      ).toBe(400);
      const missing = await call(t, "POST", "/v1/auth/login", { email: user.email });
      expect(missing.status).toBe(400);
      expect(((await missing.json()) as { error: string }).error).toMatch(/password/);
    });

    it("refuses locked accounts and accounts being deleted with a neutral 401", async () => {
      const locked = await createUser();
      await t.database.db.update(users).set({ lockedAt: new Date() }).where(eq(users.id, locked.id));
      const res = await login(locked.email);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: "sign-in is not possible for this account" });
      const leaving = await createUser();
      await t.database.db.update(users).set({ deletionRequestedAt: new Date() }).where(eq(users.id, leaving.id));
      expect((await login(leaving.email)).status).toBe(401);
    });

    it("slows one client's failures for an account in growing tiers: 429 with Retry-After", async () => {
      const user = await createUser();
      const client = freshAddress();
      for (let i = 0; i < 5; i++) expect((await login(user.email, "wrong password " + i, client)).status).toBe(401);
      const limited = await login(user.email, PASSWORD, client);
      expect(limited.status).toBe(429);
      const first = Number(limited.headers.get("retry-after"));
      expect(first).toBeGreaterThan(0);
      expect(first).toBeLessThanOrEqual(60);
      // the same for an address nobody has: the limit tells nothing about accounts
      const nobody = newEmail();
      for (let i = 0; i < 5; i++) expect((await login(nobody, "x" + i, client)).status).toBe(401);
      expect((await login(nobody, "x", client)).status).toBe(429);
      // after the minute: the next tier allows 10 in 15 minutes, then the wait grows
      t.setNow(Date.now() + 61_000);
      for (let i = 0; i < 5; i++) expect((await login(user.email, "wrong again " + i, client)).status).toBe(401);
      // a minute on, the 15-minute tier is full: the wait has grown
      t.setNow(Date.now() + 122_000);
      const second = await login(user.email, PASSWORD, client);
      expect(second.status).toBe(429);
      expect(Number(second.headers.get("retry-after"))).toBeGreaterThan(60);
      t.setNow(Date.now() + 61 * 60_000);
      expect((await login(user.email, PASSWORD, client)).status).toBe(200);
      t.setNow(Date.now());
    });

    it("limits failures per client address too", async () => {
      const address = freshAddress();
      for (let i = 0; i < 20; i++) expect((await login(newEmail(), "wrong", address)).status).toBe(401);
      const limited = await login(newEmail(), "wrong", address);
      expect(limited.status).toBe(429);
      expect(limited.headers.get("retry-after")).not.toBeNull();
    });
  });

  describe("signup", () => {
    const signup = (email: string, password = PASSWORD, extra: Record<string, unknown> = {}) =>
      call(t, "POST", "/v1/auth/signup", {
        email,
        password,
        infoCheck: "",
        preferredLanguage: "de",
        instanceID: t.config.INSTANCE_ID,
        ...extra,
      });

    it("creates an account with a main profile and mails a verify link; login then works", async () => {
      const email = newEmail();
      const signedUpAt = Math.floor(now().getTime() / 1000);
      const res = await signup(email);
      expect(res.status).toBe(200);
      const body = (await res.json()) as Envelope;
      expect(body.token.accessToken).toBe("");
      const [user] = await t.database.db.select().from(users).where(eq(users.email, email));
      expect(user!.accountConfirmedAt).toBeNull();
      expect(user!.preferredLanguage).toBe("de");
      expect(await t.database.db.select().from(profiles).where(eq(profiles.userId, user!.id))).toHaveLength(1);
      const [verify] = await mails(user!.id, "verify-email");
      expect(String(verify!.payload.verifyUrl)).toContain(`${t.config.VERIFY_EMAIL_URL}?token=`);
      const signedIn = await login(email);
      expect(signedIn.status).toBe(200);
      // case-backend's main profile: named by the blurred address, consent given at sign-up
      const { user: answered } = (await signedIn.json()) as {
        user: { profiles: { alias: string; consentConfirmedAt: number; avatarID: string; mainProfile: boolean }[] };
      };
      expect(answered.profiles).toEqual([
        expect.objectContaining({
          alias: `${email[0]}****@example.org`,
          avatarID: "default",
          mainProfile: true,
          consentConfirmedAt: signedUpAt,
        }),
      ]);
    });

    it("answers a taken address exactly like a new one, creates nothing and tells the owner", async () => {
      const owner = await createUser();
      const fresh = await signup(newEmail());
      const taken = await signup(owner.email.toUpperCase(), "another long passphrase");
      expect(taken.status).toBe(fresh.status);
      expect(await taken.json()).toEqual(await fresh.json());
      const [row] = await t.database.db.select().from(users).where(eq(users.id, owner.id));
      expect(row!.passwordHash).toBe(owner.passwordHash);
      expect(await mails(owner.id, "signup-attempt")).toHaveLength(1);
    });

    it("creates nothing for a filled honeypot but answers the same", async () => {
      const email = newEmail();
      const res = await signup(email, PASSWORD, { infoCheck: "I am a bot" });
      expect(res.status).toBe(200);
      expect(await t.database.db.select().from(users).where(eq(users.email, email))).toHaveLength(0);
    });

    it("applies the password policy with a 400 naming password, and checks the address and language", async () => {
      for (const [password, message] of [
        ["short", /password must be at least 8 characters/],
        ["iloveyou", /password is too common/],
        ["x".repeat(513), /password/],
      ] as const) {
        const res = await signup(newEmail(), password);
        expect(res.status, password).toBe(400);
        expect(((await res.json()) as { error: string }).error).toMatch(message);
      }
      expect((await signup("not-an-address")).status).toBe(400);
      expect((await signup(newEmail(), PASSWORD, { preferredLanguage: "german" })).status).toBe(400);
    });
  });

  describe("signing up again with a taken address changes nothing of the account", () => {
    const NEWSLETTER_OFF = { subscribedToNewsletter: false, toggleWeeklySubscription: undefined };
    const signup = (email: string, password = PASSWORD) =>
      call(t, "POST", "/v1/auth/signup", {
        email,
        password,
        infoCheck: "",
        preferredLanguage: "nl",
        instanceID: t.config.INSTANCE_ID,
      });
    /** What tekenradar's signUpAction does after POST /v1/auth/signup: log in, then turn the newsletter off. */
    async function appSignupFlow(email: string, password = PASSWORD) {
      const answer = await signup(email, password);
      const signedIn = await login(email, password);
      if (signedIn.status !== 200) return { answer, signedIn, preferences: undefined };
      const { token } = (await signedIn.json()) as Envelope;
      const preferences = await call(t, "PUT", "/v1/user/contact-preferences", NEWSLETTER_OFF, {
        token: token.accessToken,
      });
      return { answer, signedIn, preferences, accessToken: token.accessToken };
    }
    async function subscribedOwner() {
      const owner = await createUser();
      await t.database.db
        .update(users)
        .set({ subscribedToNewsletter: true, subscribedToWeekly: true, weeklyMessageDayOfWeek: 3 })
        .where(eq(users.id, owner.id));
      const [row] = await t.database.db.select().from(users).where(eq(users.id, owner.id));
      return row!;
    }
    const accountOf = async (id: string) => (await t.database.db.select().from(users).where(eq(users.id, id)))[0]!;
    const settingsOf = (row: typeof users.$inferSelect) => ({
      email: row.email,
      passwordHash: row.passwordHash,
      preferredLanguage: row.preferredLanguage,
      subscribedToNewsletter: row.subscribedToNewsletter,
      subscribedToWeekly: row.subscribedToWeekly,
      weeklyMessageDayOfWeek: row.weeklyMessageDayOfWeek,
      accountConfirmedAt: row.accountConfirmedAt,
    });

    it("the app's sign-up flow with the owner's own address and password: answered as a new one, settings kept", async () => {
      const owner = await subscribedOwner();
      const profilesBefore = await t.database.db.select().from(profiles).where(eq(profiles.userId, owner.id));
      const fresh = await appSignupFlow(newEmail());
      const again = await appSignupFlow(owner.email);
      expect(again.answer.status).toBe(fresh.answer.status);
      expect(await again.answer.json()).toEqual(await fresh.answer.json());
      expect(again.signedIn.status).toBe(200);
      // the app tests only for 200: the write is answered as usual, and not made
      expect(again.preferences!.status).toBe(fresh.preferences!.status);
      expect(again.preferences!.status).toBe(200);
      const after = await accountOf(owner.id);
      expect(settingsOf(after)).toEqual(settingsOf(owner));
      expect(await t.database.db.select().from(profiles).where(eq(profiles.userId, owner.id))).toEqual(profilesBefore);
      const shown = (await (await call(t, "GET", "/v1/user", undefined, { token: again.accessToken! })).json()) as {
        user: { contactPreferences: { subscribedToNewsletter: boolean } };
      };
      expect(shown.user.contactPreferences.subscribedToNewsletter).toBe(true);
      expect(after.signupRepeatedAt).toBeNull(); // the mark is spent

      // the owner's own choice afterwards is honoured
      const choice = await call(t, "PUT", "/v1/user/contact-preferences", NEWSLETTER_OFF, {
        token: again.accessToken!,
      });
      expect(choice.status).toBe(200);
      expect((await accountOf(owner.id)).subscribedToNewsletter).toBe(false);
    });

    it("a new account's flow is applied as before", async () => {
      const email = newEmail();
      const flow = await appSignupFlow(email);
      expect(flow.preferences!.status).toBe(200);
      const [row] = await t.database.db.select().from(users).where(eq(users.email, email));
      expect(row!.subscribedToNewsletter).toBe(false);
      expect(row!.signupRepeatedAt).toBeNull();
    });

    it("a sign-up with someone else's address and the wrong password marks nothing: the owner's write applies", async () => {
      const owner = await subscribedOwner();
      const attempt = await appSignupFlow(owner.email, "another long passphrase");
      expect(attempt.answer.status).toBe(200);
      expect(attempt.signedIn.status).toBe(401);
      expect((await accountOf(owner.id)).signupRepeatedAt).toBeNull();
      const envelope = (await (await login(owner.email)).json()) as Envelope;
      const own = await call(t, "PUT", "/v1/user/contact-preferences", NEWSLETTER_OFF, {
        token: envelope.token.accessToken,
      });
      expect(own.status).toBe(200);
      expect((await accountOf(owner.id)).subscribedToNewsletter).toBe(false);
    });

    it("only the sign-up's own write is skipped, and only within 5 minutes of the sign-up", async () => {
      const owner = await subscribedOwner();
      expect((await signup(owner.email)).status).toBe(200);
      const res = await login(owner.email);
      const { token } = (await res.json()) as Envelope;
      // another change (the newsletter on, the weekly toggle) is the owner's and applies; the mark stays
      const weekly = await call(
        t,
        "PUT",
        "/v1/user/contact-preferences",
        { subscribedToNewsletter: true, toggleWeeklySubscription: true },
        { token: token.accessToken },
      );
      expect(weekly.status).toBe(200);
      expect((await accountOf(owner.id)).subscribedToWeekly).toBe(false);
      expect((await accountOf(owner.id)).signupRepeatedAt).not.toBeNull();
      // past the window the sign-up's write is the owner's own
      t.setNow(Date.now() + 5 * 60_000 + 2_000);
      try {
        const late = await call(t, "PUT", "/v1/user/contact-preferences", NEWSLETTER_OFF, {
          token: token.accessToken,
        });
        expect(late.status).toBe(200);
        expect((await accountOf(owner.id)).subscribedToNewsletter).toBe(false);
      } finally {
        t.setNow(Date.now());
      }
    });
  });

  describe("token renewal and logout", () => {
    const renew = (accessToken: string, refreshToken: string) =>
      call(t, "POST", "/v1/auth/token/renew", { refreshToken }, { token: accessToken });

    it("renews with an expired access token and rotates the refresh token", async () => {
      const { envelope } = await signedIn();
      t.setNow(Date.now() + (t.config.PARTICIPANT_ACCESS_TOKEN_TTL_SECONDS + 120) * 1000);
      expect((await studies(envelope.token.accessToken, envelope.token.selectedProfile)).status).toBe(401);
      const res = await renew(envelope.token.accessToken, envelope.token.refreshToken);
      expect(res.status).toBe(200);
      const renewed = (await res.json()) as Envelope;
      expect(renewed.token.refreshToken).not.toBe(envelope.token.refreshToken);
      expect((await studies(renewed.token.accessToken, renewed.token.selectedProfile)).status).toBe(200);
      t.setNow(Date.now());
    });

    it("lets concurrent renewals within the grace both succeed", async () => {
      const { envelope } = await signedIn();
      const [a, b] = await Promise.all([
        renew(envelope.token.accessToken, envelope.token.refreshToken),
        renew(envelope.token.accessToken, envelope.token.refreshToken),
      ]);
      expect([a.status, b.status]).toEqual([200, 200]);
    });

    it("takes a spent token after the grace for a theft: the family is revoked and the new tokens die", async () => {
      const { envelope } = await signedIn();
      const renewed = (await (await renew(envelope.token.accessToken, envelope.token.refreshToken)).json()) as Envelope;
      t.setNow(Date.now() + (t.config.PARTICIPANT_REFRESH_GRACE_SECONDS + 5) * 1000);
      const reuse = await renew(envelope.token.accessToken, envelope.token.refreshToken);
      expect(reuse.status).toBe(401);
      expect(await reuse.json()).toEqual({ error: "refresh token already used: session ended, sign in again" });
      expect((await renew(renewed.token.accessToken, renewed.token.refreshToken)).status).toBe(401);
      expect((await studies(renewed.token.accessToken, renewed.token.selectedProfile)).status).toBe(401);
      t.setNow(Date.now());
    });

    it("refuses unknown refresh tokens, another session's, forged access tokens and tokens without a session", async () => {
      const { envelope } = await signedIn();
      const other = await signedIn();
      expect((await renew(envelope.token.accessToken, "A".repeat(43))).status).toBe(401);
      expect((await renew(envelope.token.accessToken, other.envelope.token.refreshToken)).status).toBe(401);
      const forged = await mintParticipantToken({
        now: Date.now(),
        userId: other.user.id,
        tokenVersion: 0,
        secret: "x".repeat(40),
        sessionId: "00000000-0000-4000-8000-000000000000",
      });
      expect((await renew(forged, envelope.token.refreshToken)).status).toBe(401);
      const cli = await mintParticipantToken({
        now: Date.now(),
        userId: other.user.id,
        tokenVersion: 0,
        secret: t.config.PARTICIPANT_JWT_SECRET,
      });
      expect((await renew(cli, envelope.token.refreshToken)).status).toBe(401);
      expect(
        (await call(t, "POST", "/v1/auth/token/renew", { refreshToken: envelope.token.refreshToken })).status,
      ).toBe(401);
    });

    it("ends the session's tokens at once on logout; other sessions stay", async () => {
      const { user, envelope } = await signedIn();
      const second = (await (await login(user.email)).json()) as Envelope;
      const res = await call(t, "POST", "/v1/auth/logout", undefined, { token: envelope.token.accessToken });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ message: "logout successful", tokensRevoked: 1 });
      expect((await studies(envelope.token.accessToken, envelope.token.selectedProfile)).status).toBe(401);
      expect((await renew(envelope.token.accessToken, envelope.token.refreshToken)).status).toBe(401);
      expect((await studies(second.token.accessToken, second.token.selectedProfile)).status).toBe(200);
      expect((await call(t, "POST", "/v1/auth/logout")).status).toBe(401);
      // signing out again with the ended session's genuine token: nothing left to end, 200 as case-backend
      const again = await call(t, "POST", "/v1/auth/logout", undefined, { token: envelope.token.accessToken });
      expect(again.status).toBe(200);
      expect(await again.json()).toEqual({ message: "already signed out", tokensRevoked: 0 });
      // a forged token is still refused
      const forged = `${envelope.token.accessToken.slice(0, -4)}AAAA`;
      expect((await call(t, "POST", "/v1/auth/logout", undefined, { token: forged })).status).toBe(401);
    });
  });

  describe("verify-email, resend, temp tokens", () => {
    it("confirms the address with the mailed token once; resend waits a minute", async () => {
      const email = newEmail();
      await call(t, "POST", "/v1/auth/signup", { email, password: PASSWORD, preferredLanguage: "en" });
      const [user] = await t.database.db.select().from(users).where(eq(users.email, email));
      const [mail] = await mails(user!.id, "verify-email");
      const token = new URL(String(mail!.payload.verifyUrl)).searchParams.get("token")!;
      const res = await call(t, "POST", "/v1/auth/verify-email", { token });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { user: Envelope["user"] };
      expect(body.user.account.accountConfirmedAt).toBeGreaterThan(0);
      // as case-backend: the app signs in with the same link right after (its access token or a password)
      const before = (await (await login(email)).json()) as Envelope;
      const relogin = await call(t, "POST", "/v1/auth/login-with-temptoken", {
        tempToken: token,
        password: "",
        accessToken: before.token.accessToken,
      });
      expect(relogin.status).toBe(200);
      expect(((await relogin.json()) as Envelope).user.account.accountConfirmedAt).toBeGreaterThan(0);
      // it confirms once (a repeat within two minutes answers the same); it still signs in for an hour after its use, then not
      const repeated = await call(t, "POST", "/v1/auth/verify-email", { token });
      expect(repeated.status).toBe(200);
      t.setNow(Date.now() + 3 * 60_000);
      const again = await call(t, "POST", "/v1/auth/verify-email", { token });
      expect(again.status).toBe(401);
      expect(await again.json()).toEqual({ error: "invalid or expired verification token" });
      t.setNow(Date.now() + 61 * 60_000);
      const late = (await (await login(email)).json()) as Envelope;
      expect(
        (
          await call(t, "POST", "/v1/auth/login-with-temptoken", {
            tempToken: token,
            password: "",
            accessToken: late.token.accessToken,
          })
        ).status,
      ).toBe(401);
      t.setNow(Date.now());

      const envelope = (await (await login(email)).json()) as Envelope;
      const resend = (address: string) =>
        call(
          t,
          "POST",
          "/v1/auth/resend-email-verification",
          { email: address },
          { token: envelope.token.accessToken },
        );
      t.setNow(Date.now() + 120_000);
      expect((await resend(email)).status).toBe(200);
      expect((await resend(email)).status).toBe(429);
      expect((await resend(newEmail())).status).toBe(400);
      t.setNow(Date.now());
    });

    it("swaps the address with a change-email token, signs the account out and tells the old address", async () => {
      const { user, envelope } = await signedIn();
      const target = newEmail();
      const token = await createAccountToken(t.database.db, {
        userId: user.id,
        purpose: "change-email",
        ttlSeconds: 3600,
        now: now(),
        info: { newEmail: target },
      });
      const res = await call(t, "POST", "/v1/auth/verify-email", { token });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { user: Envelope["user"] }).user.account.accountID).toBe(target);
      expect((await studies(envelope.token.accessToken, envelope.token.selectedProfile)).status).toBe(401);
      const [notice] = await mails(user.id, "email-changed");
      expect(notice!.toAddress).toBe(user.email);
      expect((await login(target)).status).toBe(200);
    });

    it("tells a survey-login token's account and signs in with it and the password", async () => {
      const user = await createUser();
      const tempToken = await createAccountToken(t.database.db, {
        userId: user.id,
        purpose: "survey-login",
        ttlSeconds: 3600,
        now: now(),
      });
      const info = await call(t, "POST", "/v1/auth/temptoken-info", { tempToken, instanceID: t.config.INSTANCE_ID });
      expect(await info.json()).toEqual({ userID: user.id, email: user.email });
      const res = await call(t, "POST", "/v1/auth/login-with-temptoken", {
        tempToken,
        password: PASSWORD,
        accessToken: "",
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as Envelope).token.lastOTP.email).toBeGreaterThan(0);
      expect(
        (await call(t, "POST", "/v1/auth/login-with-temptoken", { tempToken, password: "wrong password" })).status,
      ).toBe(401);
      expect((await call(t, "POST", "/v1/auth/login-with-temptoken", { tempToken })).status).toBe(400);
      expect((await call(t, "POST", "/v1/auth/temptoken-info", { tempToken: "A".repeat(43) })).status).toBe(401);
    });
  });

  describe("password reset ends in a working sign-in", () => {
    it("get-infos names the account; reset signs out old sessions, and login with the new password works", async () => {
      const { user, envelope } = await signedIn();
      const initiated = await call(t, "POST", "/v1/password-reset/initiate", {
        email: user.email,
        instanceID: t.config.INSTANCE_ID,
      });
      expect(initiated.status).toBe(200);
      const [mail] = await mails(user.id, "password-reset");
      const token = new URL(String(mail!.payload.resetUrl)).searchParams.get("token")!;
      expect(await (await call(t, "POST", "/v1/password-reset/get-infos", { token })).json()).toEqual({
        accountId: user.email,
      });
      const reset = await call(t, "POST", "/v1/password-reset/reset", { token, newPassword: "a brand new passphrase" });
      expect(reset.status).toBe(200);
      expect((await studies(envelope.token.accessToken, envelope.token.selectedProfile)).status).toBe(401);
      expect(
        (
          await call(
            t,
            "POST",
            "/v1/auth/token/renew",
            { refreshToken: envelope.token.refreshToken },
            { token: envelope.token.accessToken },
          )
        ).status,
      ).toBe(401);
      expect((await login(user.email)).status).toBe(401);
      expect((await login(user.email, "a brand new passphrase")).status).toBe(200);
      expect((await call(t, "POST", "/v1/password-reset/get-infos", { token })).status).toBe(401);
      const [open] = await t.database.db
        .select({ n: count() })
        .from(refreshTokens)
        .innerJoin(participantSessions, eq(participantSessions.id, refreshTokens.sessionId))
        .where(
          eq(
            participantSessions.id,
            (
              await t.database.db
                .select()
                .from(participantSessions)
                .where(eq(participantSessions.userId, user.id))
                .orderBy(participantSessions.createdAt)
            )[0]!.id,
          ),
        );
      expect(open!.n).toBe(1);
      void initiatePasswordReset;
    });
  });
});

/**
 * A participant app that calls from its own server (tekenradar's Next.js server actions) sends
 * every participant's request from one address: listed in PARTICIPANT_APP_ADDRESSES, it is not
 * one client to per-address limits, while each account keeps its own limit.
 */
describe("participant app servers (PARTICIPANT_APP_ADDRESSES)", () => {
  const APP_SERVER = "192.0.2.10";
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { PARTICIPANT_APP_ADDRESSES: `${APP_SERVER}, 2001:db8::10` } });
  });
  afterAll(async () => {
    await t.close();
  });
  const login = (email: string, address: string) =>
    call(
      t,
      "POST",
      "/v1/auth/login",
      { email, password: "wrong password", instanceID: t.config.INSTANCE_ID },
      { address },
    );
  const email = () => `p-${randomBytes(5).toString("hex")}@example.org`;

  it("counts no failures per address for the app's server, but still per account", async () => {
    // 25 participants mistyping once each, all through the app's server: more than an address's 20 a minute
    for (let i = 0; i < 25; i++) expect((await login(email(), APP_SERVER)).status).toBe(401);
    // one account guessed at through the app's server is still slowed after its 5th failure
    const target = email();
    for (let i = 0; i < 5; i++) expect((await login(target, APP_SERVER)).status).toBe(401);
    expect((await login(target, APP_SERVER)).status).toBe(429);
    // any other address is one client, as before
    const other = freshAddress();
    for (let i = 0; i < 20; i++) expect((await login(email(), other)).status).toBe(401);
    expect((await login(email(), other)).status).toBe(429);
  });

  it("registers temporary participants for the app's server beyond an address's limit", async () => {
    const register = (address: string) =>
      call(t, "POST", "/v1/study-service/temp-participant/register", { studyKey: "no-study" }, { address });
    // refused for the unknown study, but never by the per-address limit
    for (let i = 0; i < 40; i++) expect((await register(APP_SERVER)).status).not.toBe(429);
  });

  it("refuses a setting that is not a list of IP addresses", () => {
    const env = { DATABASE_URL: "postgres://postgres@127.0.0.1:5432/x", NODE_ENV: "test" };
    expect(() => loadConfig({ ...env, PARTICIPANT_APP_ADDRESSES: "app.example.org" })).toThrow(
      /PARTICIPANT_APP_ADDRESSES/,
    );
    expect(
      loadConfig({ ...env, PARTICIPANT_APP_ADDRESSES: " 192.0.2.10 ,2001:db8::10" }).PARTICIPANT_APP_ADDRESSES,
    ).toEqual(["192.0.2.10", "2001:db8::10"]);
  });
});
