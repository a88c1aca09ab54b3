import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { auditLog, emailTemplates, permissions, smsTemplates } from "@studyflow/db";
import { managementToken, setupStudy } from "../fixtures";
import { createTestApp, type TestApp } from "../test-app";
import { caseAdminCall, replayCaseAdminCall } from "./replay";

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");

/** A template as case-admin's editor makes it. */
function emailTemplate(messageType: string, body = "<p>Hello {{.firstName}}</p>", extra: object = {}) {
  return {
    messageType,
    defaultLanguage: "en",
    headerOverrides: { from: "Study <study@example.org>", sender: "", replyTo: ["team@example.org"], noReplyTo: false },
    translations: [
      { lang: "en", subject: "Hello", templateDef: b64(body) },
      {
        lang: "de",
        subject: "Hallo",
        templateDef: b64("<p>Hallo {{if .firstName}}{{.firstName}}{{else}}du{{end}}</p>"),
      },
    ],
    ...extra,
  };
}

/** A request as case-admin's fetch sends it (text/plain body), for calls case-admin-calls.json does not list. */
async function send(t: TestApp, method: string, path: string, token?: string, body?: unknown) {
  const response = await t.app.request(path, {
    method,
    headers: {
      ...(body === undefined ? {} : { "content-type": "text/plain;charset=UTF-8" }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
}

describe("case-admin messaging: e-mail templates, SMS templates", () => {
  let t: TestApp;
  let admin: string;
  let mailer: string;
  let outsider: string;
  let fluOnly: string;

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "flu" });
    await setupStudy(t, { key: "covid" });
    admin = await managementToken(t, "root", true);
    mailer = await managementToken(t, "mailer");
    outsider = await managementToken(t, "outsider");
    fluOnly = await managementToken(t, "flu-mailer");
    await t.database.db.insert(permissions).values([
      { subjectId: "mailer", resourceType: "messaging", studyKey: "global-email-templates", action: "*" },
      { subjectId: "mailer", resourceType: "messaging", studyKey: "study-email-templates", action: "*" },
      { subjectId: "mailer", resourceType: "messaging", studyKey: "sms-templates", action: "*" },
      // a study grant on "*" opens no messaging
      { subjectId: "outsider", resourceType: "study", studyKey: "*", action: "*" },
      {
        subjectId: "flu-mailer",
        resourceType: "messaging",
        studyKey: "study-email-templates",
        action: "*",
        limiter: [{ studyKey: "flu" }],
      },
    ]);
    await t.settle();
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(async () => {
    await t.database.db.delete(auditLog);
    await t.database.db.delete(emailTemplates);
    await t.database.db.delete(smsTemplates);
  });

  const audits = (action: string) =>
    t.database.db.select().from(auditLog).where(eq(auditLog.action, action)).orderBy(auditLog.at);

  it("global templates: case-admin creates, lists, opens, replaces and deletes one", async () => {
    const upload = caseAdminCall("uploadEmailTemplate");
    const created = await replayCaseAdminCall(t, upload, { body: emailTemplate("weekly"), token: mailer });
    expect(created).toMatchObject({ status: 200, failed: false });
    const template = created.body.template;
    expect(template).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      ...emailTemplate("weekly"),
      studyKey: "",
    });

    const list = await replayCaseAdminCall(t, caseAdminCall("getGlobalMessageTemplates"), { token: mailer });
    expect(list).toMatchObject({ status: 200, failed: false });
    expect(list.body.templates).toEqual([template]);

    const one = await replayCaseAdminCall(t, caseAdminCall("getGlobalMessageTemplate"), {
      params: { messageType: "weekly" },
      token: mailer,
    });
    expect(one).toMatchObject({ status: 200, failed: false, body: { template } });

    // case-admin posts what it read, changed: a replacement by id, the template as given
    const changed = { ...template, translations: [{ lang: "en", subject: "Hi", templateDef: b64("{{.x}}") }] };
    const replaced = await replayCaseAdminCall(t, upload, { body: changed, token: mailer });
    expect(replaced).toMatchObject({ status: 200, failed: false, body: { template: changed } });
    expect(await t.database.db.select().from(emailTemplates)).toHaveLength(1);

    const removed = await replayCaseAdminCall(t, caseAdminCall("deleteEmailTemplate"), {
      params: { messageType: "weekly" },
      token: mailer,
    });
    expect(removed).toMatchObject({ status: 200, failed: false, body: { message: "template deleted" } });
    expect(await t.database.db.select().from(emailTemplates)).toEqual([]);
    // deleting again answers the same (case-backend), and records nothing more
    const again = await replayCaseAdminCall(t, caseAdminCall("deleteEmailTemplate"), {
      params: { messageType: "weekly" },
      token: mailer,
    });
    expect(again).toMatchObject({ status: 200, body: { message: "template deleted" } });

    expect((await audits("email-template.save")).map((row) => [row.actor, row.target, row.details])).toEqual([
      ["mailer", "weekly", expect.objectContaining({ created: true, languages: ["en", "de"] })],
      ["mailer", "weekly", expect.objectContaining({ created: false, languages: ["en"] })],
    ]);
    expect(await audits("email-template.delete")).toHaveLength(1);
  });

  it("a type without a global template reads as an empty one, which case-admin opens as new", async () => {
    const answer = await replayCaseAdminCall(t, caseAdminCall("getGlobalMessageTemplate"), {
      params: { messageType: "newsletter" },
      token: admin,
    });
    expect(answer).toMatchObject({ status: 200, failed: false });
    expect(answer.body.template).toMatchObject({ id: "", messageType: "newsletter", translations: [] });
    // its `id: ""` posted back creates the template
    const created = await replayCaseAdminCall(t, caseAdminCall("uploadEmailTemplate"), {
      body: { ...answer.body.template, ...emailTemplate("newsletter") },
      token: admin,
    });
    expect(created).toMatchObject({ status: 200, body: { template: { messageType: "newsletter" } } });
    expect(created.body.template.id).not.toBe("");
  });

  it("keys are read case-insensitively, the message type sanitised as case-backend does", async () => {
    const answer = await replayCaseAdminCall(t, caseAdminCall("uploadEmailTemplate"), {
      body: {
        MessageType: ' "study reminder"\n',
        DefaultLanguage: "en",
        Translations: [{ Lang: "en", Subject: "S", TemplateDef: b64("x") }],
      },
      token: admin,
    });
    expect(answer.status).toBe(200);
    expect(answer.body.template).toMatchObject({
      messageType: "study+reminder",
      defaultLanguage: "en",
      headerOverrides: null,
      translations: [{ lang: "en", subject: "S", templateDef: b64("x") }],
    });
  });

  it("refuses a template that case-backend refuses, naming what is wrong, and stores nothing", async () => {
    const upload = caseAdminCall("uploadEmailTemplate");
    const refused = async (body: unknown, error: RegExp, status = 400) => {
      const answer = await replayCaseAdminCall(t, upload, { body, token: admin });
      expect(answer).toMatchObject({ status, failed: true, body: { error: expect.stringMatching(error) } });
    };
    await refused({ ...emailTemplate("a"), translations: [] }, /^translations: .*translation list is empty/);
    await refused({ messageType: "a" }, /^translations: .*translation list is empty/);
    await refused(
      { ...emailTemplate("a"), translations: [{ lang: "en", subject: "", templateDef: "not base64!" }] },
      /^translations\[0\]\.templateDef: error while checking template validity: not base64/,
    );
    await refused(
      emailTemplate("a", "Hello {{.name"),
      /^translations\[0\]\.templateDef: error while checking template validity \(lang "en"\): line 1: unclosed action/,
    );
    await refused(emailTemplate("a", "{{if .x}}open"), /translations\[0\].*has no \{\{end\}\}/);
    await refused(emailTemplate("a", "{{ shout .x }}"), /function "shout" not defined/);
    await refused(emailTemplate("a", '{{template "footer"}}'), /no such template "footer"/);
    await refused(emailTemplate("a", "   "), /empty template/);
    await refused({ ...emailTemplate("a"), messageType: " '' " }, /^messageType: must not be empty/);
    await refused({ ...emailTemplate("a"), translations: "en" }, /translations/);
    await refused({ ...emailTemplate("a"), id: "not-a-stored-id" }, /not found/, 404);
    const empty = await replayCaseAdminCall(t, upload, { rawBody: "", token: admin });
    expect(empty).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^body/) } });
    const broken = await replayCaseAdminCall(t, upload, { rawBody: "{", token: admin });
    expect(broken).toMatchObject({ status: 400, body: { error: "body: not valid JSON" } });
    expect(await t.database.db.select().from(emailTemplates)).toEqual([]);
    expect(await audits("email-template.save")).toEqual([]);
  });

  it("accepts the Go template language's actions: trim markers, comments, variables, range, define", async () => {
    const body =
      '{{- /* greeting */ -}}\n{{define "sig"}}<p>{{.}}</p>{{end}}' +
      '{{$name := or .firstName "participant"}}<h1>{{ $name }}</h1>' +
      "{{range $i, $v := .list}}{{$i}}{{$v}}{{else}}none{{end}}" +
      '{{with .studyKey}}{{.}}{{end}}{{if and (eq .lang "de") (ne .x "")}}de{{else if .y}}y{{end}}' +
      '{{template "sig" "The team"}}{{printf "%s-%d" .code 3 | html}}{{len "abc"}}';
    const answer = await replayCaseAdminCall(t, caseAdminCall("uploadEmailTemplate"), {
      body: emailTemplate("rich", body),
      token: admin,
    });
    expect(answer).toMatchObject({ status: 200, failed: false });
    expect(answer.body.template.translations[0].templateDef).toBe(b64(body));
  });

  it("a second template of a type without its id is a conflict; an id of another scope is unknown", async () => {
    const upload = caseAdminCall("uploadEmailTemplate");
    const first = await replayCaseAdminCall(t, upload, { body: emailTemplate("weekly"), token: admin });
    const second = await replayCaseAdminCall(t, upload, { body: emailTemplate("weekly"), token: admin });
    expect(second).toMatchObject({ status: 409, failed: true, body: { error: expect.stringMatching(/exists/) } });
    const study = await send(t, "POST", "/v1/messaging/email-templates/study-templates/flu", admin, {
      ...emailTemplate("weekly"),
      studyKey: "flu",
    });
    expect(study.status).toBe(200);
    // the study's template id posted to the global route does not move it
    const moved = await replayCaseAdminCall(t, upload, {
      body: { ...emailTemplate("weekly"), id: study.body.template.id },
      token: admin,
    });
    expect(moved.status).toBe(404);
    // renaming a template onto another type of the scope is a conflict
    await replayCaseAdminCall(t, upload, { body: emailTemplate("monthly"), token: admin });
    const renamed = await replayCaseAdminCall(t, upload, {
      body: { ...emailTemplate("monthly"), id: first.body.template.id },
      token: admin,
    });
    expect(renamed.status).toBe(409);
    const rows = await t.database.db.select().from(emailTemplates).orderBy(emailTemplates.messageType);
    expect(rows.map((row) => [row.messageType, row.studyKey])).toEqual([
      ["monthly", null],
      ["weekly", null],
      ["weekly", "flu"],
    ]);
  });

  it("study templates: case-admin saves one for a study, lists, opens and deletes it", async () => {
    const created = await send(t, "POST", "/v1/messaging/email-templates/study-templates/flu", mailer, {
      ...emailTemplate("reminder"),
      studyKey: "flu",
    });
    expect(created.status).toBe(200);
    const template = created.body.template;
    expect(template).toEqual({ id: expect.any(String), ...emailTemplate("reminder"), studyKey: "flu" });

    const all = await replayCaseAdminCall(t, caseAdminCall("getStudyMessageTemplates"), { token: mailer });
    expect(all).toMatchObject({ status: 200, failed: false, body: { templates: [template] } });
    const global = await replayCaseAdminCall(t, caseAdminCall("getGlobalMessageTemplates"), { token: mailer });
    expect(global.body.templates).toEqual([]);

    const one = await replayCaseAdminCall(t, caseAdminCall("getStudyMessageTemplate"), {
      params: { studyKey: "flu", messageType: "reminder" },
      token: mailer,
    });
    expect(one).toMatchObject({ status: 200, failed: false, body: { template } });
    const ofStudy = await send(t, "GET", "/v1/messaging/email-templates/study-templates/flu", mailer);
    expect(ofStudy).toEqual({ status: 200, body: { templates: [template] } });

    // the path's study wins over the body's; a replacement by id keeps it there
    const replaced = await send(t, "POST", "/v1/messaging/email-templates/study-templates/flu", mailer, {
      ...template,
      studyKey: "covid",
      defaultLanguage: "de",
    });
    expect(replaced).toMatchObject({ status: 200, body: { template: { studyKey: "flu", defaultLanguage: "de" } } });

    const removed = await send(t, "DELETE", "/v1/messaging/email-templates/study-templates/flu/reminder", mailer);
    expect(removed).toEqual({ status: 200, body: { message: "template deleted" } });
    const gone = await replayCaseAdminCall(t, caseAdminCall("getStudyMessageTemplate"), {
      params: { studyKey: "flu", messageType: "reminder" },
      token: mailer,
    });
    expect(gone).toMatchObject({ status: 404, failed: true, body: { error: expect.stringMatching(/not found/) } });
    const saved = await audits("email-template.save");
    expect(saved.map((row) => row.studyKey)).toEqual(["flu", "flu"]);
    expect((await audits("email-template.delete")).map((row) => row.studyKey)).toEqual(["flu"]);
  });

  it("a study template for an unknown study is 404 and stores nothing; both slashes are served", async () => {
    const unknown = await send(t, "POST", "/v1/messaging/email-templates/study-templates/nope", admin, {
      ...emailTemplate("reminder"),
      studyKey: "nope",
    });
    expect(unknown).toEqual({ status: 404, body: { error: 'study "nope" not found' } });
    expect(await t.database.db.select().from(emailTemplates)).toEqual([]);
    const slash = await send(t, "GET", "/v1/messaging/email-templates/global-templates/", admin);
    expect(slash).toEqual({ status: 200, body: { templates: [] } });
    const studySlash = await send(t, "GET", "/v1/messaging/email-templates/study-templates/", admin);
    expect(studySlash).toEqual({ status: 200, body: { templates: [] } });
  });

  it("permissions: 401 without a token, 403 without a messaging grant, nothing written", async () => {
    const upload = caseAdminCall("uploadEmailTemplate");
    const anonymous = await replayCaseAdminCall(t, upload, { body: emailTemplate("weekly") });
    expect(anonymous).toMatchObject({ status: 401, failed: true, body: { error: expect.any(String) } });
    const forbidden = await replayCaseAdminCall(t, upload, { body: emailTemplate("weekly"), token: outsider });
    expect(forbidden).toMatchObject({
      status: 403,
      failed: true,
      body: { error: 'missing permission "*" for messaging "global-email-templates"' },
    });
    for (const [func, params] of [
      ["getGlobalMessageTemplates", {}],
      ["getGlobalMessageTemplate", { messageType: "weekly" }],
      ["deleteEmailTemplate", { messageType: "weekly" }],
      ["getStudyMessageTemplates", {}],
      ["getStudyMessageTemplate", { studyKey: "flu", messageType: "weekly" }],
      ["getSmsTemplate", { messageType: "weekly" }],
    ] as const) {
      const answer = await replayCaseAdminCall(t, caseAdminCall(func), { params, token: outsider });
      expect({ func, status: answer.status }).toEqual({ func, status: 403 });
      const none = await replayCaseAdminCall(t, caseAdminCall(func), { params });
      expect({ func, status: none.status }).toEqual({ func, status: 401 });
    }
    const sms = await replayCaseAdminCall(t, caseAdminCall("uploadSmsTemplate"), {
      body: { messageType: "otp", translations: [{ lang: "en", templateDef: b64("{{.code}}") }] },
      token: outsider,
    });
    expect(sms.status).toBe(403);
    expect(await t.database.db.select().from(emailTemplates)).toEqual([]);
    expect(await t.database.db.select().from(smsTemplates)).toEqual([]);
  });

  it("a study-template grant limited to one study opens that study's templates only", async () => {
    const own = await send(t, "POST", "/v1/messaging/email-templates/study-templates/flu", fluOnly, {
      ...emailTemplate("reminder"),
    });
    expect(own.status).toBe(200);
    const other = await send(t, "POST", "/v1/messaging/email-templates/study-templates/covid", fluOnly, {
      ...emailTemplate("reminder"),
    });
    expect(other.status).toBe(403);
    const read = await send(t, "GET", "/v1/messaging/email-templates/study-templates/flu/reminder", fluOnly);
    expect(read.status).toBe(200);
    const readOther = await send(t, "GET", "/v1/messaging/email-templates/study-templates/covid/reminder", fluOnly);
    expect(readOther.status).toBe(403);
    const deleteOther = await send(t, "DELETE", "/v1/messaging/email-templates/study-templates/covid/x", fluOnly);
    expect(deleteOther.status).toBe(403);
    // every study's list is not limited to one study
    const all = await replayCaseAdminCall(t, caseAdminCall("getStudyMessageTemplates"), { token: fluOnly });
    expect(all.status).toBe(403);
    // nor do study templates open global ones
    const global = await replayCaseAdminCall(t, caseAdminCall("getGlobalMessageTemplates"), { token: fluOnly });
    expect(global.status).toBe(403);
    const rows = await t.database.db.select().from(emailTemplates);
    expect(rows.map((row) => row.studyKey)).toEqual(["flu"]);
  });

  it("SMS templates: stored and read back as given; a missing type reads as an empty one", async () => {
    const missing = await replayCaseAdminCall(t, caseAdminCall("getSmsTemplate"), {
      params: { messageType: "verification-code" },
      token: mailer,
    });
    expect(missing).toMatchObject({
      status: 200,
      failed: false,
      body: { template: { id: "", messageType: "verification-code", translations: [] } },
    });
    const sms = {
      messageType: "verification-code",
      defaultLanguage: "en",
      from: "Study",
      translations: [
        { lang: "en", templateDef: b64("Your code: {{.verificationCode}}") },
        { lang: "de", templateDef: b64("Ihr Code: {{.verificationCode}}") },
      ],
    };
    const saved = await replayCaseAdminCall(t, caseAdminCall("uploadSmsTemplate"), { body: sms, token: mailer });
    expect(saved).toMatchObject({ status: 200, failed: false });
    expect(saved.body.template).toEqual({ id: expect.any(String), ...sms });
    const read = await replayCaseAdminCall(t, caseAdminCall("getSmsTemplate"), {
      params: { messageType: "verification-code" },
      token: mailer,
    });
    expect(read.body.template).toEqual(saved.body.template);
    const replaced = await replayCaseAdminCall(t, caseAdminCall("uploadSmsTemplate"), {
      body: { ...saved.body.template, from: "Team" },
      token: mailer,
    });
    expect(replaced).toMatchObject({ status: 200, body: { template: { id: saved.body.template.id, from: "Team" } } });
    const duplicate = await replayCaseAdminCall(t, caseAdminCall("uploadSmsTemplate"), { body: sms, token: mailer });
    expect(duplicate.status).toBe(409);
    const bad = await replayCaseAdminCall(t, caseAdminCall("uploadSmsTemplate"), {
      body: { ...sms, translations: [{ lang: "en", templateDef: b64("{{.code") }] },
      token: mailer,
    });
    expect(bad).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/^translations\[0\]\.templateDef/) },
    });
    const noType = await replayCaseAdminCall(t, caseAdminCall("uploadSmsTemplate"), {
      body: { ...sms, messageType: "" },
      token: mailer,
    });
    expect(noType).toMatchObject({ status: 400, body: { error: "messageType: must not be empty" } });
    const rows = await t.database.db.select().from(smsTemplates);
    expect(rows.map((row) => row.fromName)).toEqual(["Team"]);
    expect((await audits("sms-template.save")).map((row) => row.details)).toEqual([
      expect.objectContaining({ created: true }),
      expect.objectContaining({ created: false }),
    ]);
    const slash = await send(t, "POST", "/v1/messaging/sms-templates/", mailer, { ...sms, messageType: "other" });
    expect(slash.status).toBe(200);
  });
});
