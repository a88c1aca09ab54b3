import { createHash, randomBytes } from "node:crypto";
import { count, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outgoingMessages, passwordResetTokens, users } from "@studyflow/db";
import { hashPassword, initiatePasswordReset, verifyPassword } from "@studyflow/domain/participant-accounts";
import { queuedMails, userRow } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

const OLD_PASSWORD = "Old-harbour-lights-1";
const NEW_PASSWORD = "New-lighthouse-keeper-2";
const INVALID_TOKEN = { error: "invalid or expired reset token" };
const RULE = { error: "password must be at least 8 characters long" };
const INITIATED = { message: "if the address belongs to an account, a reset link has been sent" };

let addressCounter = 0;
/** Each request gets its own client address unless a test wants to share one, so limits do not leak between tests. */
function freshAddress(): string {
  addressCounter += 1;
  return `198.51.${Math.floor(addressCounter / 250)}.${addressCounter % 250}`;
}

function post(t: TestApp, path: string, body: unknown, address = freshAddress()) {
  return t.app.request(path, {
    method: "POST",
    // the client's address as a proxy in front of the API appends it (TRUST_PROXY=1 in tests)
    headers: { "content-type": "application/json", "x-forwarded-for": `10.0.0.1, ${address}` },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

const reset = (t: TestApp, body: unknown, address?: string) => post(t, "/v1/password-reset/reset", body, address);
const initiate = (t: TestApp, body: unknown, address?: string) => post(t, "/v1/password-reset/initiate", body, address);

async function createUser(t: TestApp) {
  const email = `user-${randomBytes(5).toString("hex")}@example.org`;
  const [user] = await t.database.db
    .insert(users)
    .values({ email, passwordHash: await hashPassword(OLD_PASSWORD), preferredLanguage: "de" })
    .returning();
  return user!;
}

async function tokenRows(t: TestApp, userId: string) {
  return t.database.db.select().from(passwordResetTokens).where(eq(passwordResetTokens.userId, userId));
}

async function issueToken(t: TestApp, email: string): Promise<string> {
  const issued = await initiatePasswordReset(t.database.db, {
    email,
    now: new Date(t.deps.clock()),
    ttlSeconds: t.config.RESET_TOKEN_TTL_SECONDS,
    resetUrl: t.config.RESET_PASSWORD_URL,
  });
  return issued!.token;
}

async function tableCounts(t: TestApp) {
  const [tokens] = await t.database.db.select({ n: count() }).from(passwordResetTokens);
  const [outbox] = await t.database.db.select({ n: count() }).from(outgoingMessages);
  return { tokens: tokens!.n, outbox: outbox!.n };
}

describe("POST /v1/password-reset/reset", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it("sets the new password, ends sessions, consumes the token and queues a notice", async () => {
    const user = await createUser(t);
    const token = await issueToken(t, user.email);

    const res = await reset(t, { token, newPassword: NEW_PASSWORD });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ message: "password reset successful" });

    const after = await userRow(t, user.id);
    await expect(verifyPassword(after.passwordHash, NEW_PASSWORD)).resolves.toBe(true);
    await expect(verifyPassword(after.passwordHash, OLD_PASSWORD)).resolves.toBe(false);
    expect(after.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(after.tokenVersion).toBe(user.tokenVersion + 1);
    expect(after.passwordChangedAt).toBeInstanceOf(Date);

    const [tokenRow] = await tokenRows(t, user.id);
    expect(tokenRow!.usedAt).toBeInstanceOf(Date);

    const [resetMail] = await queuedMails(t, user.id, "password-reset");
    expect(resetMail).toMatchObject({ toAddress: user.email, language: "de", status: "pending" });
    const [changedMail] = await queuedMails(t, user.id, "password-changed");
    expect(changedMail).toMatchObject({ toAddress: user.email, userId: user.id, language: "de", status: "pending" });
  });

  it("answers unknown, malformed and used tokens with one identical 400", async () => {
    const unknown = await reset(t, { token: randomBytes(32).toString("base64url"), newPassword: NEW_PASSWORD });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toEqual(INVALID_TOKEN);

    const malformed = await reset(t, { token: "not a token", newPassword: NEW_PASSWORD });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual(INVALID_TOKEN);

    const user = await createUser(t);
    const token = await issueToken(t, user.email);
    expect((await reset(t, { token, newPassword: NEW_PASSWORD })).status).toBe(200);
    const used = await reset(t, { token, newPassword: "Another-new-password-3" });
    expect(used.status).toBe(400);
    expect(await used.json()).toEqual(INVALID_TOKEN);
    await expect(verifyPassword((await userRow(t, user.id)).passwordHash, NEW_PASSWORD)).resolves.toBe(true);
  });

  it("does not reveal the password rule to a caller without a valid token", async () => {
    const res = await reset(t, { token: randomBytes(32).toString("base64url"), newPassword: "weak" });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(INVALID_TOKEN);
  });

  it("refuses a weak password with the rule and leaves the token usable", async () => {
    const user = await createUser(t);
    const token = await issueToken(t, user.email);

    // NIST-style policy: length and blocklist, no character classes (see passwords.ts)
    for (const weak of ["short1A", "abc", "😀😀😀😀"]) {
      const res = await reset(t, { token, newPassword: weak });
      expect(res.status, weak).toBe(400);
      expect(await res.json()).toEqual(RULE);
    }
    const unchanged = await userRow(t, user.id);
    expect(unchanged.passwordHash).toBe(user.passwordHash);
    expect(unchanged.tokenVersion).toBe(user.tokenVersion);
    expect((await tokenRows(t, user.id))[0]!.usedAt).toBeNull();
    expect(await queuedMails(t, user.id, "password-changed")).toHaveLength(0);

    expect((await reset(t, { token, newPassword: NEW_PASSWORD })).status).toBe(200);
  });

  it("refuses a common password", async () => {
    const user = await createUser(t);
    const token = await issueToken(t, user.email);
    const res = await reset(t, { token, newPassword: "Welcome2024!" });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: "password is too common: choose one that is not on lists of leaked passwords",
    });
    expect((await tokenRows(t, user.id))[0]!.usedAt).toBeNull();
  });

  it("invalidates the user's other outstanding reset links", async () => {
    const user = await createUser(t);
    const first = await issueToken(t, user.email);
    const second = await issueToken(t, user.email);
    expect((await reset(t, { token: first, newPassword: NEW_PASSWORD })).status).toBe(200);
    const res = await reset(t, { token: second, newPassword: "Another-new-password-3" });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(INVALID_TOKEN);
    expect((await tokenRows(t, user.id)).every((row) => row.usedAt !== null)).toBe(true);
  });

  it("validates the body and names the field", async () => {
    const missingToken = await reset(t, { newPassword: NEW_PASSWORD });
    expect(missingToken.status).toBe(400);
    expect(((await missingToken.json()) as { error: string }).error).toMatch(/^body\.token: /);

    const emptyPassword = await reset(t, { token: "abc", newPassword: "" });
    expect(emptyPassword.status).toBe(400);
    expect(((await emptyPassword.json()) as { error: string }).error).toMatch(/^body\.newPassword: /);

    const wrongType = await reset(t, { token: 42, newPassword: NEW_PASSWORD });
    expect(wrongType.status).toBe(400);
    expect(((await wrongType.json()) as { error: string }).error).toMatch(/^body\.token: /);
  });

  it("answers malformed JSON with 400, not 500", async () => {
    const res = await reset(t, '{"token": "abc", "newPassword": ');
    expect(res.status).toBe(400);
    expect(await res.json()).toHaveProperty("error");
  });

  it("limits attempts per token: 429 with Retry-After and nothing written", async () => {
    const user = await createUser(t);
    const token = await issueToken(t, user.email);
    const before = await tableCounts(t);
    // Five tries from five addresses: only the token's own limit can bite.
    for (let i = 0; i < 5; i++) expect((await reset(t, { token, newPassword: "weak" })).status).toBe(400);

    const limited = await reset(t, { token, newPassword: NEW_PASSWORD });
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual({ error: "too many password reset attempts; try again later" });
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);

    const after = await userRow(t, user.id);
    expect(after.passwordHash).toBe(user.passwordHash);
    expect(after.tokenVersion).toBe(user.tokenVersion);
    expect((await tokenRows(t, user.id))[0]!.usedAt).toBeNull();
    expect(await tableCounts(t)).toEqual(before);
  });

  it("limits attempts per client address to 20 per 15 minutes", async () => {
    const address = freshAddress();
    for (let i = 0; i < 20; i++) {
      const res = await reset(t, { token: randomBytes(32).toString("base64url"), newPassword: NEW_PASSWORD }, address);
      expect(res.status).toBe(400);
    }
    // Even a good token is refused from this address now, and nothing changes.
    const user = await createUser(t);
    const token = await issueToken(t, user.email);
    const limited = await reset(t, { token, newPassword: NEW_PASSWORD }, address);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await userRow(t, user.id)).passwordHash).toBe(user.passwordHash);
    expect((await tokenRows(t, user.id))[0]!.usedAt).toBeNull();

    expect((await reset(t, { token, newPassword: NEW_PASSWORD })).status).toBe(200);
  });

  it("lets exactly one of two simultaneous resets with one token win", async () => {
    const user = await createUser(t);
    const token = await issueToken(t, user.email);
    const passwords = ["First-racer-password-1", "Second-racer-password-2"];
    const responses = await Promise.all(passwords.map(async (newPassword) => reset(t, { token, newPassword })));
    expect(responses.map((r) => r.status).sort()).toEqual([200, 400]);
    const loser = responses.find((r) => r.status === 400)!;
    expect(await loser.json()).toEqual(INVALID_TOKEN);

    const after = await userRow(t, user.id);
    expect(after.tokenVersion).toBe(user.tokenVersion + 1);
    const matches = await Promise.all(passwords.map((pw) => verifyPassword(after.passwordHash, pw)));
    expect(matches.filter(Boolean)).toHaveLength(1);
    expect(matches[responses.findIndex((r) => r.status === 200)]).toBe(true);
    expect(await queuedMails(t, user.id, "password-changed")).toHaveLength(1);
  });

  it("stores the token only as its SHA-256", async () => {
    const user = await createUser(t);
    const token = await issueToken(t, user.email);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const rows = await tokenRows(t, user.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.tokenHash).toBe(createHash("sha256").update(token).digest("hex"));
    expect(rows[0]!.purpose).toBe("password-reset");
    const stored = await t.database.sql`select * from password_reset_tokens where user_id = ${user.id}`;
    expect(JSON.stringify(stored)).not.toContain(token);
    const userStored = await t.database.sql`select * from users where id = ${user.id}`;
    expect(JSON.stringify(userStored)).not.toContain(token);
    // Rate-limit keys in Redis hold the hash too, never the token.
    await reset(t, { token, newPassword: "weak" });
    const keys = await t.deps.redis.keys(`${t.config.QUEUE_PREFIX}:ratelimit:*`);
    expect(keys.some((key) => key.includes(rows[0]!.tokenHash))).toBe(true);
    expect(keys.some((key) => key.includes(token))).toBe(false);
  });

  it("the e-mailed link opens a form that posts to the reset route, reflecting nothing", async () => {
    const res = await t.app.request("/reset-password?token=%3Cscript%3Ealert(1)%3C/script%3E");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    const html = await res.text();
    expect(html).toContain('fetch("/v1/password-reset/reset"');
    expect(html).not.toContain("alert(1)");
  });
});

describe("POST /v1/password-reset/reset with a moving clock", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { RESET_TOKEN_TTL_SECONDS: "3600" } });
  });
  afterAll(async () => {
    await t.close();
  });

  it("accepts a token until it expires and refuses it after, with the same message as an unknown one", async () => {
    const issuedAt = Date.now();
    t.setNow(issuedAt);
    const early = await createUser(t);
    const earlyToken = await issueToken(t, early.email);
    const late = await createUser(t);
    const lateToken = await issueToken(t, late.email);

    t.setNow(issuedAt + 3600_000 - 1_000);
    expect((await reset(t, { token: earlyToken, newPassword: NEW_PASSWORD })).status).toBe(200);

    t.setNow(issuedAt + 3600_000);
    const expired = await reset(t, { token: lateToken, newPassword: NEW_PASSWORD });
    expect(expired.status).toBe(400);
    expect(await expired.json()).toEqual(INVALID_TOKEN);
    expect((await userRow(t, late.id)).passwordHash).toBe(late.passwordHash);
    expect((await tokenRows(t, late.id))[0]!.usedAt).toBeNull();
  });

  it("lets a client try again once the rate-limit window has passed", async () => {
    const start = Date.now() + 10 * 3600_000;
    t.setNow(start);
    const address = freshAddress();
    for (let i = 0; i < 20; i++)
      await reset(t, { token: randomBytes(32).toString("base64url"), newPassword: NEW_PASSWORD }, address);
    const limited = await reset(t, { token: "x", newPassword: NEW_PASSWORD }, address);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe(String(15 * 60));
    t.setNow(start + 15 * 60_000);
    expect((await reset(t, { token: "x", newPassword: NEW_PASSWORD }, address)).status).toBe(400);
  });
});

describe("POST /v1/password-reset/initiate", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { RESET_PASSWORD_URL: "https://app.example.org/reset-password" } });
  });
  afterAll(async () => {
    await t.close();
  });

  it("answers an unknown address like a known one and writes nothing", async () => {
    const before = await tableCounts(t);
    const res = await initiate(t, { email: "nobody-here@example.org" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(INITIATED);
    expect(await tableCounts(t)).toEqual(before);
  });

  it("for a known address stores a token and queues an e-mail whose link resets the password", async () => {
    const user = await createUser(t);
    const res = await initiate(t, { email: `  ${user.email.toUpperCase()}\n` });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(INITIATED);

    const tokens = await tokenRows(t, user.id);
    expect(tokens).toHaveLength(1);
    expect(tokens[0]!.usedAt).toBeNull();
    const expiresIn = tokens[0]!.expiresAt.getTime() - Date.now();
    expect(expiresIn).toBeGreaterThan(86_400_000 - 60_000);
    expect(expiresIn).toBeLessThanOrEqual(86_400_000);

    const mails = await queuedMails(t, user.id, "password-reset");
    expect(mails).toHaveLength(1);
    const mail = mails[0]!;
    expect(mail).toMatchObject({ toAddress: user.email, userId: user.id, language: "de", status: "pending" });
    expect(mail.payload).toMatchObject({ validForHours: 24 });
    const link = new URL(String(mail.payload.resetUrl));
    expect(`${link.origin}${link.pathname}`).toBe("https://app.example.org/reset-password");
    const token = link.searchParams.get("token")!;
    expect(createHash("sha256").update(token).digest("hex")).toBe(tokens[0]!.tokenHash);

    expect((await reset(t, { token, newPassword: NEW_PASSWORD })).status).toBe(200);
    await expect(verifyPassword((await userRow(t, user.id)).passwordHash, NEW_PASSWORD)).resolves.toBe(true);
  });

  it("refuses a missing or malformed address with 400 naming the field", async () => {
    for (const body of [{}, { email: "not-an-address" }, { email: 7 }]) {
      const res = await initiate(t, body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/^body\.email: /);
    }
    const malformed = await initiate(t, "{email:");
    expect(malformed.status).toBe(400);
  });

  it("limits requests per e-mail to 5 an hour, known or not", async () => {
    for (const email of ["rate-probe@example.org", (await createUser(t)).email]) {
      for (let i = 0; i < 5; i++) expect((await initiate(t, { email })).status).toBe(200);
      const before = await tableCounts(t);
      const limited = await initiate(t, { email: email.toUpperCase() });
      expect(limited.status).toBe(429);
      expect(await limited.json()).toEqual({ error: "too many password reset requests; try again later" });
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(Number(limited.headers.get("retry-after"))).toBeLessThanOrEqual(3600);
      expect(await tableCounts(t)).toEqual(before);
    }
  });

  it("limits requests per client address to 10 an hour", async () => {
    const address = freshAddress();
    for (let i = 0; i < 10; i++) {
      expect((await initiate(t, { email: `probe-${i}@example.org` }, address)).status).toBe(200);
    }
    const user = await createUser(t);
    const limited = await initiate(t, { email: user.email }, address);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await tokenRows(t, user.id)).toHaveLength(0);
  });
});
