import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  auditLog,
  confidentialIdMap,
  emailTemplates,
  outgoingMessages,
  permissions,
  scheduledEmails,
  smsTemplates,
  users,
} from "@studyflow/db";
import { SCHEDULED_EMAIL_TEMPLATE, fireDueScheduledEmails } from "@studyflow/domain/messages";
import { managementToken, participantUser, setupStudy } from "../fixtures";
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

describe("case-admin messaging: scheduled e-mails and their firing", () => {
  let t: TestApp;
  let admin: string;
  let scheduler: string;
  let outsider: string;
  // the app's clock stays at the test's start (tokens are minted with the real clock)
  const NOW = Math.floor(Date.now() / 1000) * 1000;
  const nowSeconds = NOW / 1000;

  beforeAll(async () => {
    t = await createTestApp();
    t.setNow(NOW);
    await setupStudy(t, { key: "flu" });
    admin = await managementToken(t, "root", true);
    scheduler = await managementToken(t, "scheduler");
    outsider = await managementToken(t, "outsider");
    await t.database.db.insert(permissions).values([
      { subjectId: "scheduler", resourceType: "messaging", studyKey: "scheduled-emails", action: "*" },
      { subjectId: "outsider", resourceType: "messaging", studyKey: "global-email-templates", action: "*" },
    ]);
    await t.settle();
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(async () => {
    await t.database.db.delete(auditLog);
    await t.database.db.delete(scheduledEmails);
    await t.database.db.delete(outgoingMessages);
  });

  /** A schedule as case-admin's editor makes a new one. */
  const schedule = (extra: object = {}) => ({
    id: "",
    template: {
      messageType: "study-reminder",
      defaultLanguage: "en",
      translations: [
        { lang: "en", subject: "Reminder", templateDef: b64("<p>Please take part ({{.language}})</p>") },
        { lang: "de", subject: "Erinnerung", templateDef: b64("<p>Bitte mitmachen ({{.language}})</p>") },
      ],
    },
    type: "all-users",
    studyKey: "",
    nextTime: nowSeconds + 3600,
    period: 86400,
    label: "daily reminder",
    ...extra,
  });

  it("case-admin saves, lists, opens, replaces and deletes a schedule", async () => {
    const save = caseAdminCall("saveMessageSchedule");
    const saved = await replayCaseAdminCall(t, save, { body: schedule(), token: scheduler });
    expect(saved).toMatchObject({ status: 200, failed: false });
    const made = saved.body.schedule;
    expect(made).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      template: { id: "", studyKey: "", headerOverrides: null, ...schedule().template },
      type: "all-users",
      studyKey: "",
      condition: null,
      nextTime: nowSeconds + 3600,
      period: 86400,
      label: "daily reminder",
      until: 0,
    });
    const list = await replayCaseAdminCall(t, caseAdminCall("getEmailSchedules"), { token: scheduler });
    expect(list).toMatchObject({ status: 200, failed: false, body: { schedules: [made] } });
    const one = await replayCaseAdminCall(t, caseAdminCall("getEmailScheduleById"), {
      params: { id: made.id },
      token: scheduler,
    });
    expect(one).toMatchObject({ status: 200, failed: false, body: { schedule: made } });

    const changed = { ...made, label: "weekly", period: 7 * 86400, until: nowSeconds + 30 * 86400 };
    const replaced = await replayCaseAdminCall(t, save, { body: changed, token: scheduler });
    expect(replaced).toMatchObject({ status: 200, body: { schedule: changed } });
    expect(await t.database.db.select().from(scheduledEmails)).toHaveLength(1);

    const removed = await replayCaseAdminCall(t, caseAdminCall("deleteMessageSchedule"), {
      params: { id: made.id },
      token: scheduler,
    });
    expect(removed).toMatchObject({ status: 200, failed: false, body: { message: "schedule deleted" } });
    const gone = await replayCaseAdminCall(t, caseAdminCall("getEmailScheduleById"), {
      params: { id: made.id },
      token: scheduler,
    });
    expect(gone).toMatchObject({ status: 404, failed: true, body: { error: expect.stringMatching(/not found/) } });
    const actions = await t.database.db.select().from(auditLog).orderBy(auditLog.at);
    expect(actions.map((row) => [row.action, row.actor, row.target])).toEqual([
      ["scheduled-email.save", "scheduler", made.id],
      ["scheduled-email.save", "scheduler", made.id],
      ["scheduled-email.delete", "scheduler", made.id],
    ]);
    const slash = await send(t, "GET", "/v1/messaging/scheduled-emails/", scheduler);
    expect(slash).toEqual({ status: 200, body: { schedules: [] } });
  });

  it("a study-participants schedule keeps its study; an unknown study is 404", async () => {
    const save = caseAdminCall("saveMessageSchedule");
    const saved = await replayCaseAdminCall(t, save, {
      body: schedule({ type: "study-participants", studyKey: "flu" }),
      token: admin,
    });
    expect(saved).toMatchObject({
      status: 200,
      body: { schedule: { studyKey: "flu", template: { studyKey: "flu" } } },
    });
    const unknown = await replayCaseAdminCall(t, save, {
      body: schedule({ type: "study-participants", studyKey: "nope" }),
      token: admin,
    });
    expect(unknown).toMatchObject({ status: 404, body: { error: 'study "nope" not found' } });
    expect(await t.database.db.select().from(scheduledEmails)).toHaveLength(1);
  });

  it("refuses what case-backend refuses (and what studyflow cannot run), naming the field; nothing written", async () => {
    const save = caseAdminCall("saveMessageSchedule");
    const refused = async (body: unknown, error: RegExp, status = 400) => {
      const answer = await replayCaseAdminCall(t, save, { body, token: scheduler });
      expect(answer).toMatchObject({ status, failed: true, body: { error: expect.stringMatching(error) } });
    };
    await refused(schedule({ until: nowSeconds - 1 }), /^until: invalid termination date .* is in past/);
    await refused(schedule({ until: nowSeconds + 60 }), /^until: .*earlier than start date/);
    await refused(
      schedule({
        template: { ...schedule().template, translations: [{ lang: "en", subject: "", templateDef: b64("{{") }] },
      }),
      /^template\.translations\[0\]\.templateDef: error while checking template validity/,
    );
    await refused(schedule({ template: { ...schedule().template, translations: [] } }), /^template\.translations/);
    await refused(schedule({ period: 0 }), /^period: must be a positive/);
    await refused(schedule({ type: "everyone" }), /type/);
    await refused(schedule({ nextTime: "tomorrow" }), /nextTime/);
    await refused(schedule({ type: "study-participants", studyKey: "" }), /^studyKey: required/);
    await refused(
      schedule({ type: "study-participants", studyKey: "flu", condition: { name: "eq", data: [] } }),
      /^condition: /,
    );
    await refused(schedule({ id: "5f1e9f9e9f9e9f9e9f9e9f9e" }), /not found/, 404);
    const forbidden = await replayCaseAdminCall(t, save, { body: schedule(), token: outsider });
    expect(forbidden).toMatchObject({ status: 403, failed: true });
    const anonymous = await replayCaseAdminCall(t, save, { body: schedule() });
    expect(anonymous.status).toBe(401);
    for (const [func, params] of [
      ["getEmailSchedules", {}],
      ["getEmailScheduleById", { id: "x" }],
      ["deleteMessageSchedule", { id: "x" }],
    ] as const) {
      expect((await replayCaseAdminCall(t, caseAdminCall(func), { params, token: outsider })).status).toBe(403);
      expect((await replayCaseAdminCall(t, caseAdminCall(func), { params })).status).toBe(401);
    }
    expect(await t.database.db.select().from(scheduledEmails)).toEqual([]);
    expect(await t.database.db.select().from(auditLog)).toEqual([]);
  });

  it("fires a due slot once into the outbox, to confirmed accounts of today's weekly day, in their language", async () => {
    const db = t.database.db;
    const today = new Date(NOW).getUTCDay();
    const account = async (email: string, changes: Partial<typeof users.$inferInsert>) => {
      const made = await participantUser(t, ["main"], email);
      await db
        .update(users)
        .set({ accountConfirmedAt: new Date(NOW - 86400_000), weeklyMessageDayOfWeek: today, ...changes })
        .where(eq(users.id, made.user.id));
      return made.user.id;
    };
    const english = await account("en@example.org", {});
    const german = await account("de@example.org", { preferredLanguage: "de" });
    await account("unconfirmed@example.org", { accountConfirmedAt: null });
    await account("friday@example.org", { weeklyMessageDayOfWeek: (today + 1) % 7 });
    await account("locked@example.org", { lockedAt: new Date(NOW) });

    const saved = await replayCaseAdminCall(t, caseAdminCall("saveMessageSchedule"), {
      body: schedule({ nextTime: nowSeconds - 10 * 86400 - 60, until: nowSeconds + 86400 }),
      token: admin,
    });
    expect(saved.status).toBe(200);
    const later = await replayCaseAdminCall(t, caseAdminCall("saveMessageSchedule"), {
      body: schedule({ nextTime: nowSeconds + 60 }),
      token: admin,
    });
    expect(later.status).toBe(200);

    // two workers at once: the slot fires once
    const rounds = await Promise.all([
      fireDueScheduledEmails(db, new Date(NOW)),
      fireDueScheduledEmails(db, new Date(NOW)),
    ]);
    expect(rounds.reduce((sum, round) => sum + round.fired, 0)).toBe(1);
    const mails = await db.select().from(outgoingMessages).orderBy(outgoingMessages.createdAt);
    const byUser = new Map(mails.map((mail) => [mail.userId, [mail.template, mail.payload]]));
    expect(mails).toHaveLength(2);
    expect(byUser.get(english)).toEqual([
      SCHEDULED_EMAIL_TEMPLATE,
      {
        scheduleId: saved.body.schedule.id,
        messageType: "study-reminder",
        subject: "Reminder",
        html: "<p>Please take part (en)</p>",
      },
    ]);
    expect(byUser.get(german)).toEqual([
      SCHEDULED_EMAIL_TEMPLATE,
      {
        scheduleId: saved.body.schedule.id,
        messageType: "study-reminder",
        subject: "Erinnerung",
        html: "<p>Bitte mitmachen (de)</p>",
      },
    ]);
    // the next slot is the first not yet past (missed slots are skipped, not sent late)
    const [row] = await db.select().from(scheduledEmails).where(eq(scheduledEmails.id, saved.body.schedule.id));
    expect(row?.nextTime).toBe(nowSeconds - 60 + 86400);
    expect(await fireDueScheduledEmails(db, new Date(NOW))).toEqual({ fired: 0, queued: 0, ended: 0 });

    // the next slot is past `until`: it fires once more, and the schedule is gone
    const dayLater = new Date(NOW + 86400_000);
    await db.update(users).set({ weeklyMessageDayOfWeek: dayLater.getUTCDay() }).where(eq(users.id, english));
    const last = await fireDueScheduledEmails(db, dayLater);
    expect(last).toMatchObject({ ended: 1 });
    expect((await db.select().from(scheduledEmails)).map((r) => r.id)).toEqual([later.body.schedule.id]);
  });

  it("subscriptions gate weekly and newsletter mails; study-participants reach the study's accounts only", async () => {
    const db = t.database.db;
    const day = new Date(NOW).getUTCDay();
    const confirm = { accountConfirmedAt: new Date(NOW - 1000), weeklyMessageDayOfWeek: day };
    const subscribed = await participantUser(t, ["main"], "sub@example.org");
    await db
      .update(users)
      .set({ ...confirm, subscribedToWeekly: true })
      .where(eq(users.id, subscribed.user.id));
    const member = await participantUser(t, ["main"], "member@example.org");
    await db.update(users).set(confirm).where(eq(users.id, member.user.id));
    await db.insert(confidentialIdMap).values({
      studyKey: "flu",
      confidentialId: "c-1",
      profileId: member.profiles[0]!.id,
    });

    const weekly = schedule({ template: { ...schedule().template, messageType: "weekly" }, nextTime: nowSeconds });
    const study = schedule({ type: "study-participants", studyKey: "flu", nextTime: nowSeconds });
    for (const body of [weekly, study]) {
      const answer = await replayCaseAdminCall(t, caseAdminCall("saveMessageSchedule"), { body, token: admin });
      expect(answer.status).toBe(200);
    }
    expect(await fireDueScheduledEmails(db, new Date(NOW))).toMatchObject({ fired: 2, queued: 2 });
    const mails = await db.select().from(outgoingMessages);
    expect(
      mails.map((mail) => [(mail.payload as { messageType: string }).messageType, mail.userId, mail.studyKey]).sort(),
    ).toEqual(
      [
        ["study-reminder", member.user.id, "flu"],
        ["weekly", subscribed.user.id, null],
      ].sort(),
    );
  });
});
