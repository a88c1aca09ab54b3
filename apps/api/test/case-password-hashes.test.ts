/**
 * A participant account imported from CASE keeps the password hash case-backend stored. The hash is
 * made here as case-backend's pwhash makes it (pkg/user-management/pwhash: argon2id, 64 MiB, four
 * passes, one lane, 16-byte salt, 32-byte key, unpadded standard base64), with node:crypto's own
 * argon2, and signs in through the route the participant app calls.
 */
import { argon2Sync, randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { profiles, users } from "@studyflow/db";
import { PASSWORD_HASH_PARAMETERS, verifyPassword } from "@studyflow/domain/participant-accounts";
import { createTestApp, type TestApp } from "./test-app";

const PASSWORD = "harbour lights at dusk";

/** pwhash.HashPassword with case-backend's default parameters. */
function caseBackendHash(password: string): string {
  const memory = 64 * 1024;
  const iterations = 4;
  const parallelism = 1;
  const salt = randomBytes(16);
  const key = argon2Sync("argon2id", {
    message: Buffer.from(password),
    nonce: salt,
    memory,
    passes: iterations,
    parallelism,
    tagLength: 32,
  });
  // base64.RawStdEncoding: the standard alphabet without padding
  const raw = (bytes: Buffer) => bytes.toString("base64").replace(/=+$/, "");
  return `$argon2id$v=19$m=${memory},t=${iterations},p=${parallelism}$${raw(salt)}$${raw(key)}`;
}

describe("a password hash imported from CASE", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  async function importedAccount(passwordHash: string) {
    const email = `case-${randomBytes(5).toString("hex")}@example.org`;
    const [user] = await t.database.db
      .insert(users)
      .values({ email, passwordHash, accountConfirmedAt: new Date() })
      .returning();
    await t.database.db.insert(profiles).values({ userId: user!.id, mainProfile: true });
    return user!;
  }

  const login = (email: string, password: string) =>
    t.app.request("/v1/auth/login", {
      method: "POST",
      headers: { "content-type": "text/plain;charset=UTF-8", "x-forwarded-for": "10.0.0.1, 203.0.113.77" },
      body: JSON.stringify({ email, password, instanceID: t.config.INSTANCE_ID }),
    });

  const storedHash = async (userId: string) =>
    (await t.database.db.select({ hash: users.passwordHash }).from(users).where(eq(users.id, userId)))[0]!.hash;

  it("signs in with the password set in CASE, and is stored again with studyflow's parameters", async () => {
    const caseHash = caseBackendHash(PASSWORD);
    expect(caseHash).toMatch(/^\$argon2id\$v=19\$m=65536,t=4,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    const user = await importedAccount(caseHash);

    const res = await login(user.email, PASSWORD);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { token: { accessToken: string }; user: { id: string } };
    expect(body.token.accessToken).toEqual(expect.any(String));
    expect(body.user.id).toBe(user.id);

    const after = await storedHash(user.id);
    const { memoryCost, timeCost, parallelism } = PASSWORD_HASH_PARAMETERS;
    expect(after).toMatch(new RegExp(`^\\$argon2id\\$v=19\\$m=${memoryCost},t=${timeCost},p=${parallelism}\\$`));
    expect(after).not.toBe(caseHash);
    await expect(verifyPassword(after, PASSWORD)).resolves.toBe(true);

    // the next sign-in verifies the new hash and leaves it as it is
    expect((await login(user.email, PASSWORD)).status).toBe(200);
    expect(await storedHash(user.id)).toBe(after);
  });

  it("refuses a wrong password and keeps CASE's hash until a right one", async () => {
    const caseHash = caseBackendHash(PASSWORD);
    const user = await importedAccount(caseHash);
    expect((await login(user.email, "not the password at all")).status).toBe(401);
    expect(await storedHash(user.id)).toBe(caseHash);
  });
});
