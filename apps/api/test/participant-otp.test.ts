import { randomBytes } from "node:crypto";
import { and, count, desc, eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { otpCodes, otpFailedAttempts, outgoingMessages, participantSessions, profiles, users } from "@studyflow/db";
import { hashPassword } from "@studyflow/domain/participant-accounts";
import { createTestApp, type TestApp } from "./test-app";

const PASSWORD = "harbour lights at dusk";
const SECOND = 1000;
const MINUTE = 60 * SECOND;

let addressCounter = 0;
function freshAddress(): string {
  addressCounter += 1;
  return `203.0.${Math.floor(addressCounter / 250)}.${addressCounter % 250}`;
}

/** As the participant app sends it: JSON as text/plain, through one proxy (TRUST_PROXY=1). */
function call(t: TestApp, method: string, path: string, body?: unknown, token?: string) {
  const headers: Record<string, string> = { "x-forwarded-for": `10.0.0.1, ${freshAddress()}` };
  if (body !== undefined) headers["content-type"] = "text/plain;charset=UTF-8";
  if (token) headers.authorization = `Bearer ${token}`;
  return t.app.request(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

interface Envelope {
  token: { accessToken: string; refreshToken: string; lastOTP: { email?: number } };
  user: { id: string; account: { accountConfirmedAt: number } };
}

describe("e-mail sign-in codes (GET /v1/auth/otp, POST /v1/auth/otp/verify)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });
  afterEach(() => {
    t.setNow(Date.now());
  });

  /** Moves the app's clock to `ms` after `base`. */
  const at = (base: number, ms: number) => t.setNow(base + ms);

  async function signedIn(options: { confirmed?: boolean } = {}) {
    const email = `p-${randomBytes(5).toString("hex")}@example.org`;
    const [user] = await t.database.db
      .insert(users)
      .values({
        email,
        passwordHash: await hashPassword(PASSWORD),
        accountConfirmedAt: options.confirmed === false ? null : new Date(),
      })
      .returning();
    await t.database.db.insert(profiles).values({ userId: user!.id, mainProfile: true });
    const res = await call(t, "POST", "/v1/auth/login", {
      email,
      password: PASSWORD,
      instanceID: t.config.INSTANCE_ID,
    });
    expect(res.status).toBe(200);
    const envelope = (await res.json()) as Envelope;
    return { userId: user!.id, token: envelope.token.accessToken, envelope };
  }

  const requestCode = (token: string) => call(t, "GET", "/v1/auth/otp?type=email", undefined, token);
  const verify = (token: string, code: string) => call(t, "POST", "/v1/auth/otp/verify", { code }, token);

  /** The codes mailed to the account, newest first. */
  async function mailedCodes(userId: string): Promise<string[]> {
    const rows = await t.database.db
      .select({ payload: outgoingMessages.payload })
      .from(outgoingMessages)
      .where(and(eq(outgoingMessages.userId, userId), eq(outgoingMessages.template, "otp-code")))
      .orderBy(desc(outgoingMessages.createdAt));
    return rows.map((row) => String(row.payload.code));
  }
  const storedCodes = async (userId: string) =>
    (await t.database.db.select({ n: count() }).from(otpCodes).where(eq(otpCodes.userId, userId)))[0]!.n;
  const failureRows = async (userId: string) =>
    (await t.database.db.select({ n: count() }).from(otpFailedAttempts).where(eq(otpFailedAttempts.userId, userId)))[0]!
      .n;
  const wrongFor = (codes: string[]) => ["000000", "111111", "222222", "333333"].find((c) => !codes.includes(c))!;

  it("mails a code whose verification answers lastOTP.email and confirms the address", async () => {
    at(Date.now(), 0);
    const { userId, token, envelope } = await signedIn({ confirmed: false });
    expect(envelope.user.account.accountConfirmedAt).toBe(0);
    expect((await requestCode(token)).status).toBe(200);
    const [code] = await mailedCodes(userId);
    const [stored] = await t.database.db.select().from(otpCodes).where(eq(otpCodes.userId, userId));
    expect(stored!.codeHash).not.toContain(code);
    const res = await verify(token, code!);
    expect(res.status).toBe(200);
    const verified = (await res.json()) as Envelope;
    expect(verified.token.lastOTP.email).toBe(Math.floor(t.deps.clock() / 1000));
    expect(verified.user.account.accountConfirmedAt).toBeGreaterThan(0);
    const [session] = await t.database.db
      .select()
      .from(participantSessions)
      .where(eq(participantSessions.userId, userId));
    expect(session!.lastEmailOtpAt).not.toBeNull();
    // the code is spent
    expect((await verify(token, code!)).status).toBe(401);
  });

  it("answers a second request within 30 s exactly as the first and mails nothing", async () => {
    const base = Date.now();
    const { userId, token } = await signedIn();
    at(base, 0);
    const first = await requestCode(token);
    at(base, 100);
    const second = await requestCode(token);
    expect(second.status).toBe(first.status);
    expect(await second.json()).toEqual(await first.json());
    expect(first.status).toBe(200);
    at(base, 29 * SECOND);
    const third = await requestCode(token);
    expect(third.status).toBe(200);
    expect(await third.json()).toEqual({ message: "OTP sent" });
    expect(await mailedCodes(userId)).toHaveLength(1);
    expect(await storedCodes(userId)).toBe(1);

    // past 30 s, "send the code again" mails a second code
    at(base, 31 * SECOND);
    expect((await requestCode(token)).status).toBe(200);
    const codes = await mailedCodes(userId);
    expect(codes).toHaveLength(2);

    // a used code is no reason to hold back the next one: a new sign-in right after gets its mail
    at(base, 40 * SECOND);
    expect((await verify(token, codes[0]!)).status).toBe(200);
    at(base, 45 * SECOND);
    expect((await requestCode(token)).status).toBe(200);
    expect(await mailedCodes(userId)).toHaveLength(3);
  });

  it("accepts an older code while it is valid, and a right code spends every open one", async () => {
    const base = Date.now();
    const { userId, token } = await signedIn();
    at(base, 0);
    await requestCode(token);
    at(base, 2 * MINUTE);
    await requestCode(token);
    const [newer, older] = await mailedCodes(userId);
    expect(older).toBeDefined();
    at(base, 9 * MINUTE);
    expect((await verify(token, older!)).status).toBe(200);
    expect((await verify(token, newer!)).status).toBe(401);

    // a code is valid 10 minutes
    at(base, 20 * MINUTE);
    await requestCode(token);
    const [late] = await mailedCodes(userId);
    at(base, 30 * MINUTE + SECOND);
    const res = await verify(token, late!);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: "invalid or expired code" });
  });

  it("mails at most 10 codes per account in 15 minutes, then says when to try again", async () => {
    const base = Date.now();
    const { userId, token } = await signedIn();
    for (let i = 0; i < 10; i++) {
      at(base, i * 31 * SECOND);
      expect((await requestCode(token)).status).toBe(200);
    }
    expect(await mailedCodes(userId)).toHaveLength(10);

    // the 11th: the first code leaves the window at base + 15 min, 9 min 50 s from here
    at(base, 10 * 31 * SECOND);
    const refused = await requestCode(token);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe(String(15 * 60 - 310));
    expect(await refused.json()).toEqual({ error: "too many codes requested: try again in 10 minutes" });
    // nothing sent, nothing stored
    expect(await mailedCodes(userId)).toHaveLength(10);
    expect(await storedCodes(userId)).toBe(10);

    at(base, 15 * MINUTE - 30 * SECOND);
    const later = await requestCode(token);
    expect(later.status).toBe(429);
    expect(await later.json()).toEqual({ error: "too many codes requested: try again in 30 seconds" });
    expect(later.headers.get("retry-after")).toBe("30");

    at(base, 15 * MINUTE);
    expect((await requestCode(token)).status).toBe(200);
    expect(await mailedCodes(userId)).toHaveLength(11);
  });

  it("counts wrong codes per account over all codes: the 5th ends them all, and new codes give no new guesses", async () => {
    const base = Date.now();
    const { userId, token } = await signedIn();
    at(base, 0);
    await requestCode(token);
    at(base, 31 * SECOND);
    await requestCode(token);
    const open = await mailedCodes(userId);
    const wrong = wrongFor(open);
    for (let i = 0; i < 4; i++) {
      at(base, MINUTE + i * SECOND);
      expect((await verify(token, wrong)).status).toBe(401);
    }
    // a third code adds no guesses: the account has one left
    at(base, 2 * MINUTE);
    expect((await requestCode(token)).status).toBe(200);
    const codes = await mailedCodes(userId);
    expect(codes).toHaveLength(3);
    const fifth = await verify(token, wrongFor(codes));
    expect(fifth.status).toBe(401);
    expect(await fifth.json()).toEqual({ error: "invalid or expired code" });
    expect(await failureRows(userId)).toBe(5);

    // every code ended; until the first wrong one is 15 minutes old, nothing is checked or sent
    at(base, 3 * MINUTE);
    for (const code of codes) {
      const res = await verify(token, code);
      expect(res.status).toBe(429);
      expect(res.headers.get("retry-after")).toBe(String(13 * 60));
      expect(await res.json()).toEqual({ error: "too many wrong codes: try again in 13 minutes" });
    }
    const noCode = await requestCode(token);
    expect(noCode.status).toBe(429);
    expect(await noCode.json()).toEqual({ error: "too many wrong codes: try again in 13 minutes" });
    // the refusals changed nothing: no mail, no code, no counted attempt
    expect(await mailedCodes(userId)).toHaveLength(3);
    expect(await storedCodes(userId)).toBe(3);
    expect(await failureRows(userId)).toBe(5);

    // once the oldest wrong code leaves the window, one guess is back; the ended codes stay ended
    at(base, 16 * MINUTE);
    expect((await verify(token, codes[0]!)).status).toBe(401);
    at(base, 16 * MINUTE + SECOND);
    expect((await requestCode(token)).status).toBe(200);
    const [fresh] = await mailedCodes(userId);
    expect((await verify(token, fresh!)).status).toBe(200);
  });

  it("bounds concurrent guesses: of 12 wrong codes at once, 5 are checked", async () => {
    const base = Date.now();
    const { userId, token } = await signedIn();
    at(base, 0);
    await requestCode(token);
    const [code] = await mailedCodes(userId);
    const wrong = wrongFor([code!]);
    const answers = await Promise.all(Array.from({ length: 12 }, async () => verify(token, wrong)));
    const statuses = answers.map((res) => res.status).sort();
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(7);
    expect(await failureRows(userId)).toBe(5);
  });

  it("keeps at most 10 wrong codes an hour per account however the 15-minute windows fall", async () => {
    const base = Date.now();
    const { userId, token } = await signedIn();
    for (const round of [0, 1]) {
      at(base, round * (15 * MINUTE + SECOND));
      expect((await requestCode(token)).status).toBe(200);
      const wrong = wrongFor(await mailedCodes(userId));
      for (let i = 0; i < 5; i++) expect((await verify(token, wrong)).status).toBe(401);
    }
    at(base, 2 * (15 * MINUTE + SECOND));
    expect((await requestCode(token)).status).toBe(200);
    const [code] = await mailedCodes(userId);
    const refused = await verify(token, code!);
    expect(refused.status).toBe(429);
    // the first of the 10 leaves the hour at base + 60 min, 29 min 58 s from here
    expect(await refused.json()).toEqual({ error: "too many wrong codes: try again in 30 minutes" });
  });

  it("refuses SMS codes and requires a token", async () => {
    const { token } = await signedIn();
    const sms = await call(t, "GET", "/v1/auth/otp?type=sms", undefined, token);
    expect(sms.status).toBe(400);
    expect(await sms.json()).toEqual({ error: "type: only email codes are sent (studyflow has no SMS gateway)" });
    expect((await call(t, "GET", "/v1/auth/otp")).status).toBe(401);
    expect((await call(t, "POST", "/v1/auth/otp/verify", { code: "123456" })).status).toBe(401);
  });
});
