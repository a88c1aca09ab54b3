import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { confidentialResponses } from "@studyflow/db";
import { confidentialIdOf } from "@studyflow/domain/participants";
import { bearer, managementToken, postJson, researcher, setupStudy } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

const SECRET = "flu-watch-secret-0123456789";
const OTHER_SECRET = "other-study-secret-0123456789";

/** A confidential item as the survey engine submits it (stored apart from the response). */
const nameItem = (value: string) => ({
  key: "intake.Q5",
  response: {
    key: "rg",
    items: [
      { key: "name", value },
      { key: "email", value: `${value.toLowerCase()}@example.org` },
    ],
  },
});

describe("data-exporter confidential responses (CASE)", () => {
  let t: TestApp;
  let admin: string;
  let holder: { subject: string; token: string };
  const base = "/v1/studies/flu-watch/data-exporter/confidential-responses";
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "flu-watch", secret: SECRET });
    await setupStudy(t, { key: "other", secret: OTHER_SECRET });
    admin = await managementToken(t, "root", true);
    holder = await researcher(t, "flu-watch", "get-confidential-responses");
    // one insert each, oldest first: a participant's entries come in the order they were stored
    const store = async (
      studyKey: string,
      secret: string,
      participantId: string,
      key: string,
      responses: unknown[],
    ) => {
      const [row] = await t.database.db
        .insert(confidentialResponses)
        .values({ studyKey, confidentialId: confidentialIdOf(secret, participantId), key, responses })
        .returning({ id: confidentialResponses.id });
      return row!.id;
    };
    ids.annaName = await store("flu-watch", SECRET, "p-anna", "intake.Q5", [nameItem("Anna")]);
    ids.annaContact = await store("flu-watch", SECRET, "p-anna", "contact", [
      { key: "weekly.C1", response: { key: "rg", items: [{ key: "phone", value: "+31 6 1234" }] } },
    ]);
    ids.benName = await store("flu-watch", SECRET, "p-ben", "intake.Q5", [nameItem("Ben")]);
    // another study's participant of the same id: never returned for flu-watch
    await store("other", OTHER_SECRET, "p-anna", "intake.Q5", [nameItem("Eve")]);
  });
  afterAll(async () => {
    await t.close();
  });

  it("returns each answer slot of the named participants in CASE's shape, from a text/plain body", async () => {
    // case-admin's proxy forwards the body without a Content-Type: fetch sends text/plain
    const res = await postJson(
      t,
      base,
      JSON.stringify({ participantIDs: ["p-ben", "p-anna", "p-nobody"] }),
      holder.token,
      "POST",
      {
        "Content-Type": "text/plain;charset=UTF-8",
      },
    );
    expect(res.status).toBe(200);
    const { responses } = (await res.json()) as { responses: unknown[] };
    expect(responses).toEqual([
      { participantID: "p-ben", entryID: ids.benName, responseKey: "intake.Q5-rg.name", value: "Ben" },
      { participantID: "p-ben", entryID: ids.benName, responseKey: "intake.Q5-rg.email", value: "ben@example.org" },
      { participantID: "p-anna", entryID: ids.annaName, responseKey: "intake.Q5-rg.name", value: "Anna" },
      { participantID: "p-anna", entryID: ids.annaName, responseKey: "intake.Q5-rg.email", value: "anna@example.org" },
      { participantID: "p-anna", entryID: ids.annaContact, responseKey: "weekly.C1-rg.phone", value: "+31 6 1234" },
    ]);
  });

  it("keeps one confidential key with keyFilter; keys match case-insensitively as Go's decoder does", async () => {
    const res = await postJson(t, `${base}/`, { ParticipantIDs: ["p-anna"], keyfilter: "contact" }, holder.token);
    expect(res.status).toBe(200);
    expect((await res.json()).responses).toEqual([
      { participantID: "p-anna", entryID: ids.annaContact, responseKey: "weekly.C1-rg.phone", value: "+31 6 1234" },
    ]);
  });

  it("400 without participantIDs, with an empty list or a bad body; nothing else happens", async () => {
    for (const body of [{}, { participantIDs: [] }, { keyFilter: "contact" }]) {
      const res = await postJson(t, base, body, holder.token);
      expect(res.status).toBe(400);
      expect((await res.json()).error).toBe("participantIDs is required");
    }
    for (const body of [
      "",
      "{not json",
      JSON.stringify({ participantIDs: "p-anna" }),
      JSON.stringify({ participantIDs: [""] }),
    ]) {
      const res = await postJson(t, base, body, holder.token);
      expect(res.status).toBe(400);
      expect((await res.json()).error).toMatch(/body|participantIDs/);
    }
  });

  it("get-responses alone cannot read confidential responses; 401 without a token; 404 for an unknown study", async () => {
    const responsesOnly = await researcher(t, "flu-watch", "get-responses");
    expect((await postJson(t, base, { participantIDs: ["p-anna"] }, responsesOnly.token)).status).toBe(403);
    // a holder of the right on one study is a stranger to another
    expect(
      (
        await postJson(
          t,
          "/v1/studies/other/data-exporter/confidential-responses",
          { participantIDs: ["p-anna"] },
          holder.token,
        )
      ).status,
    ).toBe(403);
    expect((await postJson(t, base, { participantIDs: ["p-anna"] })).status).toBe(401);
    const unknown = await postJson(
      t,
      "/v1/studies/nope/data-exporter/confidential-responses",
      { participantIDs: ["x"] },
      admin,
    );
    expect(unknown.status).toBe(404);
    const get = await t.app.request(base, { headers: bearer(responsesOnly.token) });
    expect(get.status).toBe(403);
  });
});

describe("data-exporter confidential-response files (CASE)", () => {
  let t: TestApp;
  let admin: string;

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "flu-watch" });
    admin = await managementToken(t, "root", true);
  });
  afterAll(async () => {
    await t.close();
  });

  const get = (path: string, token?: string) => t.app.request(path, { headers: token ? bearer(token) : {} });
  const base = "/v1/studies/flu-watch/data-exporter/confidential-responses";

  it("lists no prepared files, with and without the trailing slash", async () => {
    const holder = await researcher(t, "flu-watch", "get-confidential-responses");
    for (const path of [base, `${base}/`]) {
      const res = await get(path, holder.token);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ availableFiles: [] });
    }
  });

  it("answers a file download with 404, and 400 for an exportID that is not base64", async () => {
    const holder = await researcher(t, "flu-watch", "get-confidential-responses");
    const name = Buffer.from("2026-11-24##confidential-responses##weekly##wide.csv").toString("base64");
    const res = await get(`${base}/${name}`, holder.token);
    expect(res.status).toBe(404);
    expect((await res.json()).error).toMatch(/2026-11-24##confidential-responses##weekly##wide\.csv" does not exist/);
    const bad = await get(`${base}/${encodeURIComponent("not base64!")}`, holder.token);
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatch(/^exportID: /);
  });

  it("get-responses alone cannot see confidential files; 401 without a token; 404 for an unknown study", async () => {
    const responses = await researcher(t, "flu-watch", "get-responses");
    expect((await get(base, responses.token)).status).toBe(403);
    expect((await get(`${base}/eA`, responses.token)).status).toBe(403);
    expect((await get(base)).status).toBe(401);
    expect((await get("/v1/studies/nope/data-exporter/confidential-responses", admin)).status).toBe(404);
  });
});
