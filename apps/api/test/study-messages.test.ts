import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outgoingMessages } from "@studyflow/db";
import { bearer, managementToken, researcher, setupStudy } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

interface Listed {
  id: string;
  template: string;
  status: string;
  attempts: number;
  lastError: string | null;
}

describe("GET /v1/studies/{studyKey}/messages", () => {
  let t: TestApp;
  let reader: string;
  const list = (query = "", token = reader, studyKey = "flu-watch") =>
    t.app.request(`/v1/studies/${studyKey}/messages${query}`, { headers: bearer(token) });

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "flu-watch" });
    await setupStudy(t, { key: "diet-study" });
    ({ token: reader } = await researcher(t, "flu-watch", "read-rule-failures"));
    const at = (seconds: number) => new Date(Date.UTC(2026, 10, 1, 8, 0, seconds));
    await t.database.db.insert(outgoingMessages).values([
      {
        template: "weekly-reminder",
        studyKey: "flu-watch",
        confidentialId: "c-1",
        toAddress: "kim@example.org",
        payload: { secret: "payload" },
        status: "sent",
        attempts: 1,
        sentAt: at(5),
        createdAt: at(1),
      },
      {
        template: "kit-shipped",
        studyKey: "flu-watch",
        confidentialId: "c-2",
        status: "failed",
        attempts: 1,
        lastError: 'no template for message type "kit-shipped" in study "flu-watch"',
        createdAt: at(2),
      },
      {
        template: "researcher-notification",
        studyKey: "flu-watch",
        toAddress: "lena@example.org",
        status: "pending",
        createdAt: at(3),
      },
      {
        template: "weekly-reminder",
        studyKey: "diet-study",
        status: "failed",
        lastError: "other study",
        createdAt: at(4),
      },
      { template: "password-reset", toAddress: "someone@example.org", createdAt: at(6) },
    ]);
  });
  afterAll(async () => {
    await t.close();
  });

  it("lists the study's e-mails newest first, without addresses or payloads", async () => {
    const res = await list();
    expect(res.status).toBe(200);
    const body = (await res.json()) as { messages: Listed[]; nextCursor: string | null };
    expect(body.messages.map((m) => [m.template, m.status])).toEqual([
      ["researcher-notification", "pending"],
      ["kit-shipped", "failed"],
      ["weekly-reminder", "sent"],
    ]);
    expect(body.nextCursor).toBeNull();
    const text = JSON.stringify(body);
    // the confidential id as a JSON string: a random UUID may contain the letters c-1
    for (const hidden of ["@example.org", "payload", '"c-1"', "confidential"]) expect(text).not.toContain(hidden);
  });

  it("shows what did not go out, and why, with status=failed", async () => {
    const body = (await (await list("?status=failed")).json()) as { messages: Listed[] };
    expect(body.messages).toEqual([
      expect.objectContaining({
        template: "kit-shipped",
        status: "failed",
        attempts: 1,
        lastError: 'no template for message type "kit-shipped" in study "flu-watch"',
      }),
    ]);
  });

  it("pages with limit and the cursor it gives out", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const body = (await (await list(`?limit=1${cursor ? `&cursor=${cursor}` : ""}`)).json()) as {
        messages: Listed[];
        nextCursor: string | null;
      };
      seen.push(...body.messages.map((m) => m.template));
      cursor = body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(["researcher-notification", "kit-shipped", "weekly-reminder"]);
  });

  it("400 for a bad status, limit or cursor", async () => {
    for (const query of ["?status=lost", "?limit=0", "?limit=x", "?cursor=bm9wZQ", "?cursor=WyJ4IiwieSJd"]) {
      const res = await list(query);
      expect(res.status, query).toBe(400);
      expect(await res.json(), query).toEqual({ error: expect.any(String) });
    }
  });

  it("401 without a token, 403 without the right or with it on another study, 404 for an unknown study", async () => {
    expect((await t.app.request("/v1/studies/flu-watch/messages")).status).toBe(401);
    const { token: other } = await researcher(t, "diet-study", "read-rule-failures");
    expect((await list("", other)).status).toBe(403);
    const { token: wrongRight } = await researcher(t, "flu-watch", "run-study-action");
    expect((await list("", wrongRight)).status).toBe(403);
    const admin = await managementToken(t, "root", true);
    expect((await list("", admin, "no-such-study")).status).toBe(404);
  });
});
