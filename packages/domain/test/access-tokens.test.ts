import { SignJWT, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import {
  MANAGEMENT_TOKEN_TYPE,
  PARTICIPANT_TOKEN_TYPE,
  SESSION_ID_CLAIM,
  TOKEN_ISSUER,
  hmacKey,
  mintManagementToken,
  mintParticipantToken,
} from "@studyflow/domain/access";

const SECRET = "tokens-test-secret-0123456789abcdef";
const NOW = 1_760_000_123_456;

/** What jose's SignJWT makes of the same claims: the tokens minted before are these, byte for byte. */
function joseToken(claims: Record<string, unknown>, subject: string, ttlSeconds: number) {
  const iat = Math.floor(NOW / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(subject)
    .setIssuer(TOKEN_ISSUER)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ttlSeconds)
    .sign(hmacKey(SECRET));
}

describe("minted tokens", () => {
  it("a participant token is jose's HS256 token of the same claims, with and without a session", async () => {
    const userId = "2f0e6a8c-1b9d-4e51-a0c4-7d3f5e2b9a10";
    const withSession = await mintParticipantToken({
      userId,
      tokenVersion: 3,
      secret: SECRET,
      ttlSeconds: 900,
      now: NOW,
      sessionId: "9b1d3c5e-7f80-4a2b-8c6d-0e1f2a3b4c5d",
    });
    expect(withSession).toBe(
      await joseToken(
        { typ: PARTICIPANT_TOKEN_TYPE, tv: 3, [SESSION_ID_CLAIM]: "9b1d3c5e-7f80-4a2b-8c6d-0e1f2a3b4c5d" },
        userId,
        900,
      ),
    );
    const operatorMinted = await mintParticipantToken({ userId, tokenVersion: 0, secret: SECRET, now: NOW });
    expect(operatorMinted).toBe(await joseToken({ typ: PARTICIPANT_TOKEN_TYPE, tv: 0 }, userId, 3_600));
    const { payload, protectedHeader } = await jwtVerify(withSession, hmacKey(SECRET), {
      algorithms: ["HS256"],
      issuer: TOKEN_ISSUER,
      currentDate: new Date(NOW),
    });
    expect(protectedHeader).toEqual({ alg: "HS256", typ: "JWT" });
    expect(payload).toMatchObject({
      sub: userId,
      tv: 3,
      typ: PARTICIPANT_TOKEN_TYPE,
      exp: Math.floor(NOW / 1000) + 900,
    });
  });

  it("a management token is jose's HS256 token of the same claims", async () => {
    const token = await mintManagementToken({ subject: "researcher-1", isAdmin: true, secret: SECRET, now: NOW });
    expect(token).toBe(await joseToken({ typ: MANAGEMENT_TOKEN_TYPE, admin: true }, "researcher-1", 3_600));
  });

  it("a token signed with another secret does not verify", async () => {
    const token = await mintManagementToken({ subject: "r", isAdmin: false, secret: SECRET, now: NOW });
    await expect(jwtVerify(token, hmacKey(`${SECRET}x`), { currentDate: new Date(NOW) })).rejects.toThrow();
  });

  it("refuses times that are not finite numbers, as jose did", () => {
    expect(() =>
      mintParticipantToken({ userId: "u", tokenVersion: 0, secret: SECRET, now: NOW, ttlSeconds: Number.NaN }),
    ).toThrow(TypeError);
  });
});
