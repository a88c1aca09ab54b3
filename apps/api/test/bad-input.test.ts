import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertParticipant, managementToken, participantUser, postJson, setupStudy } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

/**
 * Whatever JSON arrives, every route answers with a 4xx and an `{"error"}` body or succeeds —
 * never a 500. Bodies are arbitrary JSON values, and objects shaped like the expected body with
 * arbitrary values in each field.
 */
describe("arbitrary request bodies never cause a 500", () => {
  let t: TestApp;
  let admin: string;
  let participant: string;
  let profileId: string;

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "study-a" });
    await insertParticipant(t.database.db, { studyKey: "study-a", participantId: "p1" });
    admin = await managementToken(t, "root", true);
    const user = await participantUser(t);
    participant = user.token;
    profileId = user.profiles[0]!.id;
  });
  afterAll(async () => {
    await t.close();
  });

  const routes = (): { method: string; path: string; token?: string; fields: string[] }[] => [
    {
      method: "POST",
      path: "/v1/studies/study-a/participants/p1/responses",
      token: admin,
      fields: ["key", "responses", "context", "submittedAt"],
    },
    {
      method: "POST",
      path: "/v1/studies/study-a/run-actions/participants/",
      token: admin,
      fields: ["rules", "dryRun"],
    },
    { method: "PUT", path: "/v1/studies/study-a/track-account", token: admin, fields: ["trackAccount"] },
    { method: "POST", path: "/v1/study-service/events/study-a/leave", token: participant, fields: ["profileID"] },
    {
      method: "POST",
      path: "/v1/study-service/events/study-a/merge-temporary-participant",
      token: participant,
      fields: ["profileID", "temporaryParticipantID"],
    },
    { method: "POST", path: "/v1/study-service/events/study-a/enter", token: participant, fields: ["profileID"] },
    { method: "POST", path: "/v1/study-service/temp-participant/register", fields: ["studyKey"] },
    { method: "POST", path: "/v1/password-reset/reset", fields: ["token", "newPassword"] },
    { method: "POST", path: "/v1/password-reset/initiate", fields: ["email"] },
  ];

  it("for every route", async () => {
    for (const route of routes()) {
      const shaped = fc.record(Object.fromEntries(route.fields.map((field) => [field, fc.jsonValue()])), {
        requiredKeys: [],
      });
      await fc.assert(
        fc.asyncProperty(fc.oneof(fc.jsonValue(), shaped, fc.constant({ profileID: profileId })), async (body) => {
          const res = await postJson(t, route.path, body, route.token, route.method, {
            // Each run its own address, so the rate limits of public routes do not end the run early.
            "X-Forwarded-For": `198.51.100.${Math.floor(Math.random() * 250)}`,
          });
          expect(res.status, `${route.method} ${route.path} ${JSON.stringify(body)}`).toBeLessThan(500);
          if (res.status >= 400) expect(Object.keys(await res.json())).toEqual(["error"]);
        }),
        { numRuns: 40 },
      );
    }
  });
});

describe("odd requests", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it("a body without a JSON content type is a 415 on studyflow's own routes, JSON on CASE's; over 2 MiB a 413", async () => {
    const admin = await managementToken(t, "root", true);
    const plain = await t.app.request("/v1/studies/any-study", {
      method: "PATCH",
      headers: { Authorization: `Bearer ${admin}` },
      body: '{"strictRules":true}',
    });
    expect(plain.status).toBe(415);
    expect(Object.keys(await plain.json())).toEqual(["error"]);
    // CASE's participant apps send JSON as text/plain: case-backend's routes read it whatever the type
    const caseShaped = await t.app.request("/v1/password-reset/initiate", {
      method: "POST",
      body: '{"email":"nobody@example.org"}',
    });
    expect(caseShaped.status, await caseShaped.clone().text()).toBe(200);
    const huge = await t.app.request("/v1/password-reset/initiate", {
      method: "POST",
      headers: { "Content-Type": "application/json", "Content-Length": String(3 * 1024 * 1024) },
      body: JSON.stringify({ email: "x".repeat(3 * 1024 * 1024) }),
    });
    expect(huge.status).toBe(413);
    expect(await huge.json()).toEqual({ error: "request body larger than 2097152 bytes" });
  });
});
