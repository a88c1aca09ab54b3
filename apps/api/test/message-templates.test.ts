import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, messageTemplates } from "@studyflow/db";
import { bearer, managementToken, postJson, researcher, setupStudy } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

describe("message templates: /v1/studies/{studyKey}/message-templates", () => {
  let t: TestApp;
  let manager: { subject: string; token: string };
  let admin: string;
  const base = "/v1/studies/flu-watch/message-templates";
  const put = (type: string, language: string, body: unknown, token = manager.token, studyKey = "flu-watch") =>
    postJson(t, `/v1/studies/${studyKey}/message-templates/${type}/${language}`, body, token, "PUT");
  const get = (path: string, token = manager.token) => t.app.request(path, { headers: bearer(token) });
  const del = (type: string, language: string, token = manager.token, studyKey = "flu-watch") =>
    t.app.request(`/v1/studies/${studyKey}/message-templates/${type}/${language}`, {
      method: "DELETE",
      headers: bearer(token),
    });
  const stored = async () =>
    t.database.db
      .select({
        type: messageTemplates.messageType,
        language: messageTemplates.language,
        subject: messageTemplates.subject,
      })
      .from(messageTemplates)
      .where(eq(messageTemplates.studyKey, "flu-watch"))
      .orderBy(messageTemplates.messageType, messageTemplates.language);

  const reminder = {
    subject: "{{studyName}}: your weekly survey",
    body: "Hello,\n\nyour kit {{linkingCodes.kit}} is on its way.\n\n{{ studyName }} team",
  };

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "flu-watch" });
    await setupStudy(t, { key: "diet-study" });
    manager = await researcher(t, "flu-watch", "manage-message-templates");
    admin = await managementToken(t, "root", true);
  });
  afterAll(async () => {
    await t.close();
  });

  it("creates (201), replaces (200), lists, reads one, all audited", async () => {
    const created = await put("weekly-reminder", "en", reminder);
    expect(created.status).toBe(201);
    expect((await created.json()).messageTemplate).toEqual({
      messageType: "weekly-reminder",
      language: "en",
      ...reminder,
      updatedBy: manager.subject,
      updatedAt: expect.any(String),
    });
    // the language tag is stored in its canonical case: de-ch and de-CH are one template
    expect(
      (await put("weekly-reminder", "de-ch", { subject: "Ihre Woche", body: "Hallo {{flags.name}}" })).status,
    ).toBe(201);
    const replaced = await put("weekly-reminder", "de-CH", { subject: "Ihre Wochenumfrage", body: "Guten Tag" });
    expect(replaced.status).toBe(200);
    expect((await replaced.json()).messageTemplate).toMatchObject({ language: "de-CH", subject: "Ihre Wochenumfrage" });
    expect((await put("kit-sent", "en", { subject: "Kit", body: "{{eventData.trackingCode}}" })).status).toBe(201);

    const list = await get(base);
    expect(list.status).toBe(200);
    const { messageTemplates: listed } = (await list.json()) as {
      messageTemplates: { messageType: string; language: string }[];
    };
    expect(listed.map((m) => `${m.messageType}/${m.language}`)).toEqual([
      "kit-sent/en",
      "weekly-reminder/de-CH",
      "weekly-reminder/en",
    ]);

    const one = await get(`${base}/weekly-reminder/de-CH`);
    expect(one.status).toBe(200);
    expect((await one.json()).messageTemplate).toMatchObject({ subject: "Ihre Wochenumfrage", body: "Guten Tag" });

    const audit = await t.database.db.select().from(auditLog).where(eq(auditLog.target, "weekly-reminder/de-CH"));
    expect(audit.map((entry) => [entry.actor, entry.action, entry.details])).toEqual([
      [
        manager.subject,
        "message-template.set",
        { messageType: "weekly-reminder", language: "de-CH", subject: "Ihre Woche", body: "Hallo {{flags.name}}" },
      ],
      [
        manager.subject,
        "message-template.set",
        {
          messageType: "weekly-reminder",
          language: "de-CH",
          subject: "Ihre Wochenumfrage",
          body: "Guten Tag",
          previous: { subject: "Ihre Woche", body: "Hallo {{flags.name}}" },
        },
      ],
    ]);
  });

  it("400 naming the field for bad syntax, unknown placeholders, bad languages and bad bodies; nothing stored", async () => {
    const before = await stored();
    const cases: [string, string, unknown, RegExp][] = [
      [
        "t",
        "en",
        { subject: "Hi {{name}}", body: "x" },
        /^subject: \{\{name\}\} at line 1, column 4 is not a placeholder/,
      ],
      [
        "t",
        "en",
        { subject: "Hi", body: "Hello {{.profileAlias}}" },
        /^body: \{\{\.profileAlias\}\} at line 1, column 7/,
      ],
      ["t", "en", { subject: "Hi", body: "Hello\n  {{flags.x" }, /^body: "\{\{" at line 2, column 3 is never closed/],
      ["t", "en", { subject: "Hi", body: "a }} b" }, /^body: "\}\}" at line 1, column 3 closes no "\{\{"/],
      [
        "t",
        "en",
        { subject: "Hi", body: "{{ if .x }}yes{{ end }}" },
        /^body: \{\{ if \.x \}\} .* is not a placeholder/,
      ],
      ["t", "en", { subject: "Hi", body: "{{flags.}}" }, /^body: \{\{flags\.\}\}/],
      ["t", "en", { subject: "two\nlines", body: "x" }, /^subject: must be one line/],
      ["t", "en", { subject: "   ", body: "x" }, /^subject: must not be empty/],
      ["t", "en", { subject: "Hi", body: "" }, /^body\.body: body must not be empty/],
      ["t", "en", { subject: "Hi", body: "x".repeat(20_001) }, /^body\.body: body is longer than 20000 characters/],
      ["t", "en", { subject: "x".repeat(201), body: "x" }, /^body\.subject: subject is longer than 200/],
      ["t", "en", { subject: "Hi" }, /^body\.body: /],
      ["t", "en", { subject: "Hi", body: "x", html: "<b>" }, /^body: Unrecognized key: "html"/],
      [
        "t",
        "english",
        { subject: "Hi", body: "x" },
        /^language: must be a language tag such as en or de-CH, got "english"/,
      ],
      ["t", "e1", { subject: "Hi", body: "x" }, /^language: must be a language tag/],
      ["bad%20type", "en", { subject: "Hi", body: "x" }, /^param\.messageType: messageType must not contain spaces/],
    ];
    for (const [type, language, body, message] of cases) {
      const res = await put(type, language, body);
      expect(res.status, `${type}/${language} ${JSON.stringify(body).slice(0, 60)}`).toBe(400);
      expect((await res.json()).error).toMatch(message);
    }
    expect(await stored()).toEqual(before);
  });

  it("deletes a template (204, audited) and answers 404 for an unknown one", async () => {
    expect((await del("kit-sent", "en")).status).toBe(204);
    const gone = await get(`${base}/kit-sent/en`);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toEqual({
      error: 'message template "kit-sent" in language "en" not found in study "flu-watch"',
    });
    expect((await del("kit-sent", "en")).status).toBe(404);
    const [entry] = await t.database.db.select().from(auditLog).where(eq(auditLog.action, "message-template.delete"));
    expect(entry).toMatchObject({
      actor: manager.subject,
      target: "kit-sent/en",
      details: { messageType: "kit-sent", language: "en", subject: "Kit", body: "{{eventData.trackingCode}}" },
    });
  });

  it("401 without a token, 403 without manage-message-templates or with it for another study, 404 unknown study", async () => {
    const routes: [string, (token: string, studyKey: string) => Response | Promise<Response>][] = [
      ["list", (token, studyKey) => get(`/v1/studies/${studyKey}/message-templates`, token)],
      ["get", (token, studyKey) => get(`/v1/studies/${studyKey}/message-templates/weekly-reminder/en`, token)],
      ["put", (token, studyKey) => put("weekly-reminder", "en", { subject: "Hacked", body: "x" }, token, studyKey)],
      ["delete", (token, studyKey) => del("weekly-reminder", "en", token, studyKey)],
    ];
    const otherRight = await researcher(t, "flu-watch", "manage-study-variables");
    const otherStudy = await researcher(t, "diet-study", "manage-message-templates");
    for (const [name, request] of routes) {
      expect((await request("", "flu-watch")).status, name).toBe(401);
      const forbidden = await request(otherRight.token, "flu-watch");
      expect(forbidden.status, name).toBe(403);
      expect(await forbidden.json()).toEqual({
        error: 'missing permission "manage-message-templates" for study "flu-watch"',
      });
      expect((await request(otherStudy.token, "flu-watch")).status, name).toBe(403);
      const missing = await request(admin, "nope");
      expect(missing.status, name).toBe(404);
      expect(await missing.json()).toEqual({ error: 'study "nope" not found' });
    }
    expect((await stored()).find((m) => m.type === "weekly-reminder" && m.language === "en")?.subject).toBe(
      reminder.subject,
    );
  });
});
