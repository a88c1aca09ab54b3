import { randomBytes } from "node:crypto";
import { and, count, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, outgoingMessages, passwordResetTokens, profiles, users } from "@studyflow/db";
import { hashPassword, verifyPassword } from "@studyflow/domain/participant-accounts";
import { adminDatabaseUrl, startTcpProxy, type TcpProxy } from "@studyflow/testkit";
import { createTestApp, type TestApp } from "./test-app";

const PASSWORD = "harbour lights at dusk";
const LIMITED = { error: "too many failed sign-in attempts; try again later" };
/** A participant app's server (PARTICIPANT_APP_ADDRESSES): it relays every participant's requests. */
const APP_SERVER = "192.0.2.10";

let addressCounter = 0;
function freshAddress(): string {
  addressCounter += 1;
  return `203.0.${Math.floor(addressCounter / 250)}.${addressCounter % 250}`;
}

const newEmail = () => `p-${randomBytes(5).toString("hex")}@example.org`;

/** As the participant app sends it: JSON as text/plain, through one proxy (TRUST_PROXY=1). */
function post(t: TestApp, path: string, body: unknown, address = freshAddress()) {
  return t.app.request(path, {
    method: "POST",
    headers: { "content-type": "text/plain;charset=UTF-8", "x-forwarded-for": `10.0.0.1, ${address}` },
    body: JSON.stringify(body),
  });
}

async function createUser(t: TestApp) {
  const email = newEmail();
  const [user] = await t.database.db
    .insert(users)
    .values({ email, passwordHash: await hashPassword(PASSWORD), accountConfirmedAt: new Date() })
    .returning();
  await t.database.db.insert(profiles).values({ userId: user!.id, mainProfile: true });
  return user!;
}

async function mailsTo(t: TestApp, email: string, template: string) {
  const [row] = await t.database.db
    .select({ n: count() })
    .from(outgoingMessages)
    .where(and(eq(outgoingMessages.toAddress, email), eq(outgoingMessages.template, template)));
  return row!.n;
}

describe("sign-in failures lock the failing client, not the account (POST /v1/auth/login)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { PARTICIPANT_APP_ADDRESSES: APP_SERVER } });
  });
  afterAll(async () => {
    await t.close();
  });

  const login = (email: string, password: string, address: string) =>
    post(t, "/v1/auth/login", { email, password, instanceID: t.config.INSTANCE_ID }, address);

  it("locks an attacker's address after 5 failures, even with the right password; the owner elsewhere signs in", async () => {
    const owner = await createUser(t);
    const attacker = freshAddress();
    for (let i = 0; i < 5; i++) expect((await login(owner.email, `guess ${i}`, attacker)).status).toBe(401);
    const locked = await login(owner.email, PASSWORD, attacker);
    expect(locked.status).toBe(429);
    expect(await locked.json()).toEqual(LIMITED);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);

    const home = await login(owner.email, PASSWORD, freshAddress());
    expect(home.status).toBe(200);
    const envelope = (await home.json()) as { token: { accessToken: string }; user: { id: string } };
    expect(envelope.token.accessToken).not.toBe("");
    expect(envelope.user.id).toBe(owner.id);
    // the owner's sign-in does not unlock the attacker, and nothing about the account changed
    expect((await login(owner.email, PASSWORD, attacker)).status).toBe(429);
    const [row] = await t.database.db.select().from(users).where(eq(users.id, owner.id));
    expect(row!.passwordHash).toBe(owner.passwordHash);
    expect(row!.lockedAt).toBeNull();
  });

  it("an owner who failed a few times from their own address still signs in there", async () => {
    const owner = await createUser(t);
    const home = freshAddress();
    for (let i = 0; i < 4; i++) expect((await login(owner.email, `typo ${i}`, home)).status).toBe(401);
    expect((await login(owner.email, PASSWORD, home)).status).toBe(200);
  });

  it("distributed guessing (many addresses, a few failures each): each new address gets 2 failures, a clean one still signs in", async () => {
    const owner = await createUser(t);
    // 10 addresses with 2 failures each: 20 in a quarter hour, more than one client can reach (10)
    for (let bot = 0; bot < 10; bot++) {
      const address = freshAddress();
      for (let i = 0; i < 2; i++) expect((await login(owner.email, `bot ${bot}/${i}`, address)).status).toBe(401);
    }
    // the account is under attack now: a further address is locked at its second failure, not its fifth
    const bot = freshAddress();
    expect((await login(owner.email, "bot guess 1", bot)).status).toBe(401);
    expect((await login(owner.email, "bot guess 2", bot)).status).toBe(401);
    const refused = await login(owner.email, PASSWORD, bot);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual(LIMITED);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);

    // the owner: from a clean address the right password works; one typo is forgiven
    expect((await login(owner.email, PASSWORD, freshAddress())).status).toBe(200);
    const typist = freshAddress();
    expect((await login(owner.email, "one typo", typist)).status).toBe(401);
    expect((await login(owner.email, PASSWORD, typist)).status).toBe(200);

    // the same for an address that has no account: the limits tell nothing about accounts
    const nobody = newEmail();
    for (let n = 0; n < 10; n++) {
      const address = freshAddress();
      for (let i = 0; i < 2; i++) expect((await login(nobody, `bot ${n}/${i}`, address)).status).toBe(401);
    }
    const late = freshAddress();
    expect((await login(nobody, "x", late)).status).toBe(401);
    expect((await login(nobody, "y", late)).status).toBe(401);
    expect((await login(nobody, "z", late)).status).toBe(429);
  });

  it("failures from elsewhere do not lock out an owner signing in through the participant app's server", async () => {
    const owner = await createUser(t);
    const attacker = freshAddress();
    for (let i = 0; i < 5; i++) expect((await login(owner.email, `guess ${i}`, attacker)).status).toBe(401);
    expect((await login(owner.email, PASSWORD, attacker)).status).toBe(429);
    expect((await login(owner.email, PASSWORD, APP_SERVER)).status).toBe(200);
  });
});

describe("sign-up of a taken address mails its owner at most 3 times a day (POST /v1/auth/signup)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { PARTICIPANT_APP_ADDRESSES: APP_SERVER } });
  });
  afterAll(async () => {
    await t.close();
  });

  const signup = (email: string, address?: string) =>
    post(
      t,
      "/v1/auth/signup",
      { email, password: "another long passphrase", preferredLanguage: "en", instanceID: t.config.INSTANCE_ID },
      address,
    );

  async function fifteenSignups(email: string, address: () => string | undefined) {
    const answers: unknown[] = [];
    for (let i = 0; i < 15; i++) {
      const res = await signup(i % 2 === 0 ? email : email.toUpperCase(), address());
      expect(res.status).toBe(200);
      answers.push(await res.json());
    }
    return answers;
  }

  it("15 sign-ups from 15 addresses: 3 mails to the owner, the same answer every time, the account unchanged", async () => {
    const owner = await createUser(t);
    const fresh = (await (await signup(newEmail())).json()) as unknown;
    const answers = await fifteenSignups(owner.email, () => undefined);
    for (const answer of answers) expect(answer).toEqual(fresh);
    expect(await mailsTo(t, owner.email, "signup-attempt")).toBe(3);
    const [row] = await t.database.db.select().from(users).where(eq(users.id, owner.id));
    expect(row!.passwordHash).toBe(owner.passwordHash);
    await expect(verifyPassword(row!.passwordHash, PASSWORD)).resolves.toBe(true);
  });

  it("15 sign-ups through the participant app's server (no per-address limit): 3 mails", async () => {
    const owner = await createUser(t);
    const answers = await fifteenSignups(owner.email, () => APP_SERVER);
    expect(new Set(answers.map((answer) => JSON.stringify(answer))).size).toBe(1);
    expect(await mailsTo(t, owner.email, "signup-attempt")).toBe(3);
  });

  it("a new address gets its account and verify mail; its sign-up mails count toward the same 3", async () => {
    const email = newEmail();
    for (let i = 0; i < 6; i++) expect((await signup(email, APP_SERVER)).status).toBe(200);
    expect(await t.database.db.select().from(users).where(eq(users.email, email))).toHaveLength(1);
    expect(await mailsTo(t, email, "verify-email")).toBe(1);
    expect(await mailsTo(t, email, "signup-attempt")).toBe(2);
  });

  it("refuses sequences and repeated characters as passwords with a 400 naming the reason, creating nothing", async () => {
    for (const [password, reason] of [
      ["123456789012", /^password is a sequence/],
      ["aaaaaaaaaaaaaaaaaaaa", /^password repeats one character/],
      ["abcabcabcabc", /^password repeats a short pattern/],
    ] as const) {
      const email = newEmail();
      const res = await post(t, "/v1/auth/signup", { email, password, instanceID: t.config.INSTANCE_ID });
      expect(res.status, password).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(reason);
      expect(await t.database.db.select().from(users).where(eq(users.email, email))).toHaveLength(0);
      expect(await mailsTo(t, email, "verify-email")).toBe(0);
    }
  });

  it("the cap is per day: a day later the owner hears of a new attempt again", async () => {
    const owner = await createUser(t);
    await fifteenSignups(owner.email, () => APP_SERVER);
    expect(await mailsTo(t, owner.email, "signup-attempt")).toBe(3);
    t.setNow(Date.now() + 24 * 60 * 60_000 + 60_000);
    try {
      expect((await signup(owner.email, APP_SERVER)).status).toBe(200);
      expect(await mailsTo(t, owner.email, "signup-attempt")).toBe(4);
    } finally {
      t.setNow(Date.now());
    }
  });
});

/**
 * Known and unknown addresses must cost the same on POST /v1/password-reset/initiate. Round trips to
 * PostgreSQL are counted at the wire by a proxy in front of the database (one pooled connection,
 * warmed), rather than timed: a count does not depend on the machine's load.
 */
describe("password-reset initiate does the same database work for known and unknown addresses", () => {
  let t: TestApp;
  let proxy: TcpProxy;
  beforeAll(async () => {
    const server = new URL(adminDatabaseUrl);
    proxy = await startTcpProxy(server.hostname, Number(server.port || 5432));
    t = await createTestApp({
      databaseThrough: (databaseUrl) => {
        const url = new URL(databaseUrl);
        url.hostname = "127.0.0.1";
        url.port = String(proxy.port);
        return createDb(url.toString(), { max: 1 });
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await proxy.close();
  });

  const initiate = (email: string) =>
    t.app.request("/v1/password-reset/initiate", {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": `10.0.0.1, ${freshAddress()}` },
      body: JSON.stringify({ email }),
    });

  /** Round trips of one initiate for `email`, after two warm-up runs (statements prepared). */
  async function roundTripsOf(email: () => string) {
    for (let warm = 0; warm < 2; warm++) expect((await initiate(email())).status).toBe(200);
    proxy.takeRoundTrips();
    const res = await initiate(email());
    expect(res.status).toBe(200);
    const trips = proxy.takeRoundTrips();
    return { trips, answer: (await res.json()) as unknown };
  }

  it("one round trip either way, the same answer, and the mail for the known address only", async () => {
    const owner = await createUser(t);
    const known = await roundTripsOf(() => owner.email);
    const unknownEmail = newEmail();
    const unknown = await roundTripsOf(() => unknownEmail);
    expect(known.trips).toBe(1);
    expect(unknown.trips).toBe(known.trips);
    expect(unknown.answer).toEqual(known.answer);

    // the known address got its three links, each in a mail, and the last one resets the password
    const mails = await t.database.db
      .select()
      .from(outgoingMessages)
      .where(and(eq(outgoingMessages.userId, owner.id), eq(outgoingMessages.template, "password-reset")))
      .orderBy(outgoingMessages.createdAt);
    expect(mails).toHaveLength(3);
    expect(mails[2]).toMatchObject({ toAddress: owner.email, status: "pending" });
    const tokens = await t.database.db
      .select()
      .from(passwordResetTokens)
      .where(eq(passwordResetTokens.userId, owner.id));
    expect(tokens).toHaveLength(3);
    expect(tokens.every((row) => row.purpose === "password-reset" && row.usedAt === null)).toBe(true);
    const link = new URL(String(mails[2]!.payload.resetUrl));
    expect(`${link.origin}${link.pathname}`).toBe(new URL(t.config.RESET_PASSWORD_URL).toString().replace(/\?.*$/, ""));
    const reset = await t.app.request("/v1/password-reset/reset", {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": `10.0.0.1, ${freshAddress()}` },
      body: JSON.stringify({ token: link.searchParams.get("token"), newPassword: "lantern orchard velvet" }),
    });
    expect(reset.status).toBe(200);

    // the unknown address: nothing written anywhere
    expect(await mailsTo(t, unknownEmail, "password-reset")).toBe(0);
    const [accounts] = await t.database.db.select({ n: count() }).from(users).where(eq(users.email, unknownEmail));
    expect(accounts!.n).toBe(0);
  });
});
