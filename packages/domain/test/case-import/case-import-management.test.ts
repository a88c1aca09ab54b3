import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asc, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  apiKeys,
  appRoles,
  appRoleTemplates,
  emailTemplates,
  managementUsers,
  outgoingMessages,
  permissions,
  scheduledEmails,
  serviceAccounts,
  smsTemplates,
} from "@studyflow/db";
import { caseAccountUuid, type CaseImportOptions } from "@studyflow/domain/case-import";
import { createStudy } from "@studyflow/domain/study-setup";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";
import { runCaseImport, writeCaseDump } from "./case-dump";
import { CASE_API_KEY, managementDump, managementImportOptions } from "./case-management-dump";

describe("importing a case-backend dump: researchers, service accounts and messaging", () => {
  let database: TestDatabase;
  let dir: string;
  const fixture = managementDump();

  const options = (over: Partial<CaseImportOptions> = {}) => managementImportOptions(dir, over);

  const run = (over: Partial<CaseImportOptions> = {}) => runCaseImport(database.db, options(over));

  const count = async (table: typeof permissions | typeof emailTemplates | typeof managementUsers) =>
    Number((await database.db.execute<{ n: string }>(sql`select count(*) as n from ${table}`))[0]!.n);

  beforeAll(async () => {
    database = await createTestDatabase();
    dir = await mkdtemp(join(tmpdir(), "case-import-management-"));
    await writeCaseDump(dir, fixture.spec);
    await createStudy(database.db, { key: "native" });
  });
  afterAll(async () => {
    await database.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it("a dry run decides the same (grants find this run's researchers) and writes nothing", async () => {
    const { summary, problems } = await run({ dryRun: true });
    expect(summary.collections.find((c) => c.collection === "permissions")).toMatchObject({ inserted: 4, skipped: 1 });
    expect(problems.filter((p) => p.collection === "permissions")).toHaveLength(1);
    expect(await count(managementUsers)).toBe(0);
    expect(await count(permissions)).toBe(0);
    expect(await count(emailTemplates)).toBe(0);
  });

  it("imports researchers, grants, service accounts, roles, templates, schedules and waiting e-mails", async () => {
    const { problems } = await run();
    const ninaId = caseAccountUuid(fixture.nina._id.toHexString());
    const people = await database.db.select().from(managementUsers).orderBy(asc(managementUsers.sub));
    expect(people.map((p) => [p.id, p.sub, p.email, p.isAdmin, p.provider])).toEqual([
      [caseAccountUuid(fixture.admin._id.toHexString()), "boss", "boss@example.org", true, "ms-entra-id"],
      [ninaId, "nina", "nina@example.org", false, "ms-entra-id"],
    ]);
    expect(people[1]!.lastLoginAt?.getTime()).toBe(1_700_000_000_000);
    expect(people[1]!.createdAt.getTime()).toBe(1_690_000_000_000);

    const robotId = caseAccountUuid(fixture.robot._id.toHexString());
    expect(await database.db.select().from(serviceAccounts)).toMatchObject([
      { id: robotId, label: "exporter", description: "exporter integration" },
    ]);
    // the key carried by its hash only, under the account, with CASE's times
    expect(await database.db.select().from(apiKeys)).toMatchObject([
      {
        subject: robotId,
        serviceAccountId: robotId,
        keyHash: createHash("sha256").update(CASE_API_KEY).digest("hex"),
        expiresAt: new Date(1_900_000_000_000),
        createdAt: new Date(1_695_000_000_000),
      },
    ]);

    const grants = await database.db.select().from(permissions).orderBy(asc(permissions.action));
    expect(grants.map((g) => [g.subjectType, g.subjectId, g.resourceType, g.studyKey, g.action, g.limiter])).toEqual([
      ["management-user", ninaId, "messaging", "global-email-templates", "*", null],
      ["service-account", robotId, "study", "flu", "get-responses", null],
      ["management-user", ninaId, "study", "flu", "read-study-config", null],
      ["management-user", ninaId, "study", "flu", "update-survey", [{ surveyKey: "intake" }]],
    ]);
    expect(await database.db.select().from(appRoles)).toMatchObject([
      { subjectType: "management-user", subjectId: ninaId, appName: "case-admin", role: "researcher" },
    ]);
    expect(await database.db.select().from(appRoleTemplates)).toMatchObject([
      {
        appName: "case-admin",
        role: "researcher",
        requiredPermissions: [
          { resourceType: "study", resourceKey: "*", action: "read-study-config", limiter: null },
          { resourceType: "messaging", resourceKey: "global-email-templates", action: "*", limiter: null },
        ],
      },
    ]);

    const templates = await database.db.select().from(emailTemplates).orderBy(asc(emailTemplates.messageType));
    expect(templates.map((t) => [t.messageType, t.studyKey, t.defaultLanguage])).toEqual([
      ["registration", null, "nl"],
      ["study-reminder", "flu", "nl"],
    ]);
    expect(templates[0]!.translations[1]).toEqual({
      lang: "en",
      subject: "Subject registration",
      templateDef: Buffer.from("<p>Hello {{.name}}</p>").toString("base64"),
    });
    expect(templates[1]!.headerOverrides).toEqual({
      from: "study@example.org",
      sender: "",
      replyTo: ["r@example.org"],
      noReplyTo: false,
    });
    expect(await database.db.select().from(smsTemplates)).toMatchObject([
      { messageType: "verification-code", fromName: "Tekenradar", translations: [{ lang: "nl" }] },
    ]);
    expect(await database.db.select().from(scheduledEmails)).toMatchObject([
      {
        type: "all-users",
        studyKey: null,
        nextTime: 1_800_000_000,
        period: 604_800,
        until: 0,
        label: "weekly all-users",
      },
    ]);
    const waiting = await database.db.select().from(outgoingMessages);
    expect(waiting).toMatchObject([
      {
        template: "case-scheduled-email",
        toAddress: "ann@example.org",
        userId: caseAccountUuid(fixture.ann._id.toHexString()),
        status: "pending",
        payload: { subject: "Reminder", html: "<p>Please fill in your survey</p>", messageType: "study-reminder" },
      },
    ]);
    expect(waiting[0]!.expiresAt?.getTime()).toBe(1_900_000_000_000);

    const reasons = problems.map((p) => `${p.collection}: ${p.reason}`);
    expect(reasons).toEqual([
      expect.stringMatching(/^permissions: its management-user [0-9a-f]{24} was not imported/),
      expect.stringMatching(/^auto-messages: participant conditions/),
    ]);
    // the key itself never reaches the report
    expect(JSON.stringify(problems)).not.toContain(CASE_API_KEY);
  });

  it("a second run changes nothing and says so", async () => {
    const before = await database.db.select().from(permissions).orderBy(asc(permissions.id));
    const { summary } = await run();
    expect(summary.changed).toBe(0);
    for (const name of ["management_users", "permissions", "email-templates", "auto-messages", "outgoing-emails"]) {
      expect(summary.collections.find((c) => c.collection === name)).toMatchObject({ inserted: 0, updated: 0 });
    }
    expect(await database.db.select().from(permissions).orderBy(asc(permissions.id))).toEqual(before);
    expect(await database.db.select().from(outgoingMessages)).toHaveLength(1);
  });

  it("a template studyflow has of its own is left alone without --replace, overwritten with it", async () => {
    await database.db.delete(emailTemplates).where(eq(emailTemplates.messageType, "registration"));
    await database.db
      .insert(emailTemplates)
      .values({ messageType: "registration", defaultLanguage: "en", updatedBy: "someone" });
    // a fresh record set for this collection: as if studyflow had the template before the first import
    await database.db.execute(sql`delete from case_import_records where kind = 'email-template'`);
    const kept = await run({ only: ["messages"] });
    expect(kept.problems.map((p) => p.reason)).toEqual(
      expect.arrayContaining([expect.stringMatching(/already has a global e-mail template "registration"; --replace/)]),
    );
    const replaced = await run({ only: ["messages"], replace: true });
    expect(replaced.summary.collections.find((c) => c.collection === "email-templates")).toMatchObject({
      updated: 2,
    });
    const [row] = await database.db.select().from(emailTemplates).where(eq(emailTemplates.messageType, "registration"));
    expect(row).toMatchObject({ defaultLanguage: "nl", updatedBy: "case-import" });
  });
});
