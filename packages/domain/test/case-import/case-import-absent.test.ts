/**
 * A deployment moving over imports a rehearsal dump, then the final dump into the same database.
 * What CASE removed between the two (an account its owner deleted with its confidential data, a
 * researcher and their grants, an app role, a revoked API key, a dropped schedule, an e-mail sent
 * meanwhile, a researcher message CASE sent, a template) leaves no document in the final dump: the
 * import reports each such row, and with --prune removes it, as studyflow removes such rows itself.
 */
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ObjectId } from "bson";
import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  apiKeys,
  appRoles,
  auditLog,
  caseImportCheckpoints,
  caseImportRecords,
  confidentialIdMap,
  confidentialResponses,
  emailTemplates,
  managementUsers,
  outgoingMessages,
  participantFiles,
  permissions,
  profiles,
  researcherMessages,
  scheduledEmails,
  studyCodeLists,
  users,
} from "@studyflow/db";
import { verifyApiKey } from "@studyflow/domain/access";
import { caseAccountUuid, type CaseImportOptions } from "@studyflow/domain/case-import";
import { createFileStore } from "@studyflow/domain/files";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";
import {
  caseConfidentialIdMapEntry,
  caseCodeListEntry,
  caseConfidentialResponse,
  caseParticipantFile,
  caseResearcherMessage,
  caseUser,
  writeCaseDump,
  CASE_PASSWORD_HASH,
  UNREADABLE_DOCUMENT,
  type DumpSpec,
  runCaseImport,
} from "./case-dump";
import {
  CASE_API_KEY,
  caseOutgoingEmail,
  casePermission,
  managementDump,
  managementImportOptions,
} from "./case-management-dump";

const clock = () => Date.UTC(2026, 0, 1);

describe("importing a newer dump over an earlier import: what CASE removed meanwhile", () => {
  let database: TestDatabase;
  let dir: string;
  const fixture = managementDump();
  const users0 = fixture.spec.databases.users;
  const messages0 = fixture.spec.databases.messageDB;
  // ann deletes her account in CASE between the dumps; bob keeps his
  const annProfile = fixture.ann.profiles[0]!._id.toHexString();
  const bob = caseUser("bob@example.org", CASE_PASSWORD_HASH, [new ObjectId()]);
  const bobProfile = bob.profiles[0]!._id.toHexString();
  const bobMail = caseOutgoingEmail(bob._id, "bob@example.org");
  const sent = caseResearcherMessage("contact", "pid-1", { note: "call me" });
  const open = caseResearcherMessage("contact", "pid-2", { note: "later" });
  const ninaRole = users0.app_roles[0]!;
  const annConfidential = caseConfidentialResponse("conf-ann", "intake.email", "ann@example.org");
  const bobConfidential = caseConfidentialResponse("conf-bob", "intake.email", "bob@example.org");
  // a rule of bob's study removed this one (REMOVE_CONFIDENTIAL_RESPONSE_BY_KEY)
  const bobPhone = caseConfidentialResponse("conf-bob", "intake.phone", "0612345678");
  const keptFile = caseParticipantFile("tr", "flu", "pid-2");
  const deletedFile = caseParticipantFile("tr", "flu", "pid-1");
  const codeAt = new Date("2024-01-01T00:00:00Z");
  const keptCode = caseCodeListEntry("flu", "kits", "KIT-1", codeAt);
  const drawnCode = caseCodeListEntry("flu", "kits", "KIT-2", codeAt);
  const adminGrant = casePermission(fixture.admin._id, "management-user", "study", "flu", "delete-study");

  const rehearsal: DumpSpec = {
    ...fixture.spec,
    databases: {
      studyDB: {
        "study-infos": fixture.spec.databases.studyDB["study-infos"],
        flu_confidentialResponses: [annConfidential, bobConfidential, bobPhone],
        flu_participantFiles: [keptFile, deletedFile],
        studyCodeLists: [keptCode, drawnCode],
        "confidential-id-map": [
          caseConfidentialIdMapEntry("flu", "conf-ann", annProfile),
          caseConfidentialIdMapEntry("flu", "conf-bob", bobProfile),
        ],
        flu_researcherMessages: [sent, open],
      },
      users: { ...users0, users: [fixture.ann, bob], permissions: [...users0.permissions, adminGrant] },
      messageDB: { ...messages0, "outgoing-emails": [...messages0["outgoing-emails"], bobMail] },
    },
  };
  // In CASE meanwhile: ann deleted her account (her confidential response and map entry went with
  // it), a rule removed one of bob's confidential responses, a file was deleted, a code drawn, the
  // admin was removed with his grant, nina lost her app role, the robot's key was revoked, the
  // all-users schedule and the study's template were dropped, ann's waiting e-mail was sent, and
  // CASE's job sent a researcher message.
  const final: DumpSpec = {
    ...fixture.spec,
    databases: {
      studyDB: {
        "study-infos": fixture.spec.databases.studyDB["study-infos"],
        flu_confidentialResponses: [bobConfidential],
        flu_participantFiles: [keptFile],
        studyCodeLists: [keptCode],
        "confidential-id-map": [rehearsal.databases.studyDB!["confidential-id-map"]![1]!],
        flu_researcherMessages: [open],
      },
      users: {
        ...users0,
        users: [bob],
        management_users: [fixture.nina],
        service_user_api_keys: [],
        app_roles: [],
      },
      messageDB: {
        ...messages0,
        "email-templates": [messages0["email-templates"][0]!],
        // the schedule with a condition is skipped by every run; the imported one was dropped
        "auto-messages": [messages0["auto-messages"][1]!],
        "outgoing-emails": [bobMail],
      },
    },
  };

  const run = (dump: string, over: Partial<CaseImportOptions> = {}) =>
    runCaseImport(
      database.db,
      managementImportOptions(join(dir, dump), { fileStore: createFileStore(database.db), ...over }),
    );
  const removedIn = (summary: Awaited<ReturnType<typeof run>>["summary"]) =>
    Object.fromEntries(summary.collections.filter((c) => c.removed > 0).map((c) => [c.collection, c.removed]));

  async function state() {
    const count = async (table: Parameters<typeof database.db.$count>[0]) => database.db.$count(table);
    return {
      users: (await database.db.select({ email: users.email }).from(users)).map((u) => u.email).sort(),
      profiles: await count(profiles),
      confidential: (await database.db.select().from(confidentialResponses)).map((r) => r.confidentialId).sort(),
      idMap: (await database.db.select().from(confidentialIdMap)).map((r) => r.confidentialId).sort(),
      researchers: (await database.db.select().from(managementUsers)).map((u) => u.email).sort(),
      permissions: await count(permissions),
      appRoles: await count(appRoles),
      apiKeys: await count(apiKeys),
      emailTemplates: (await database.db.select().from(emailTemplates)).map((t) => t.messageType).sort(),
      schedules: await count(scheduledEmails),
      pendingMails: (
        await database.db.select().from(outgoingMessages).where(eq(outgoingMessages.status, "pending"))
      ).map((m) => m.toAddress),
      researcherMessages: await count(researcherMessages),
      files: (await database.db.select().from(participantFiles)).map((f) => f.id),
      codes: (await database.db.select().from(studyCodeLists)).map((c) => c.code).sort(),
    };
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    dir = await mkdtemp(join(tmpdir(), "case-import-absent-"));
    await writeCaseDump(join(dir, "rehearsal"), rehearsal);
    await writeCaseDump(join(dir, "final"), final);
    await writeCaseDump(join(dir, "final-unreadable"), {
      ...final,
      databases: { ...final.databases, users: { ...final.databases.users, users: [bob, UNREADABLE_DOCUMENT] } },
    });
  });
  afterAll(async () => {
    await database.drop();
    await rm(dir, { recursive: true, force: true });
  });

  let rehearsed: Awaited<ReturnType<typeof state>>;

  it("the rehearsal brings everything in", async () => {
    const { problems } = await run("rehearsal");
    // the fixture's known problems: a grant of a researcher the dump lacks, a schedule with a condition
    expect(problems.filter((p) => !p.reason.includes("bytes not carried")).map((p) => p.collection)).toEqual([
      "permissions",
      "auto-messages",
    ]);
    rehearsed = await state();
    expect(rehearsed).toMatchObject({
      users: ["ann@example.org", "bob@example.org"],
      confidential: ["conf-ann", "conf-bob", "conf-bob"],
      idMap: ["conf-ann", "conf-bob"],
      researchers: ["boss@example.org", "nina@example.org"],
      permissions: 5,
      appRoles: 1,
      apiKeys: 1,
      emailTemplates: ["registration", "study-reminder"],
      schedules: 1,
      pendingMails: ["ann@example.org", "bob@example.org"],
      researcherMessages: 2,
      files: [caseAccountUuid(keptFile._id.toHexString()), caseAccountUuid(deletedFile._id.toHexString())],
      codes: ["KIT-1", "KIT-2"],
    });
  });

  it("without --prune the final dump's run reports every row CASE removed and removes none", async () => {
    const { summary, problems } = await run("final");
    expect(await state()).toEqual(rehearsed);
    expect(removedIn(summary)).toEqual({});
    const absent = problems.filter((p) => p.reason.startsWith("not in this dump"));
    expect(absent.map((p) => [p.collection, p.id]).sort()).toEqual(
      [
        ["users", fixture.ann._id.toHexString()],
        ["management_users", fixture.admin._id.toHexString()],
        ["permissions", adminGrant._id.toHexString()],
        ["service_user_api_keys", expect.any(String)],
        ["app_roles", ninaRole._id.toHexString()],
        ["email-templates", messages0["email-templates"][1]!._id.toHexString()],
        ["auto-messages", messages0["auto-messages"][0]!._id.toHexString()],
        ["outgoing-emails", messages0["outgoing-emails"][0]!._id.toHexString()],
        ["flu_researcherMessages", `flu/${sent._id.toHexString()}`],
        ["flu_confidentialResponses", caseAccountUuid(annConfidential._id.toHexString())],
        ["flu_confidentialResponses", caseAccountUuid(bobPhone._id.toHexString())],
        ["flu_participantFiles", caseAccountUuid(deletedFile._id.toHexString())],
        ["studyCodeLists", JSON.stringify(["flu", "kits", "KIT-2"])],
      ].sort(),
    );
    expect(absent.find((p) => p.collection === "users")!.reason).toContain("--prune removes it");
    // the report names a key by its hash, never by its text
    expect(JSON.stringify(problems)).not.toContain(CASE_API_KEY);
  });

  it("a dry run with --prune counts what it would remove and removes nothing", async () => {
    const { summary } = await run("final", { prune: true, dryRun: true });
    expect(removedIn(summary)).toEqual({
      users: 1,
      management_users: 1,
      permissions: 1,
      service_user_api_keys: 1,
      app_roles: 1,
      "email-templates": 1,
      "auto-messages": 1,
      "outgoing-emails": 1,
      flu_researcherMessages: 1,
      flu_confidentialResponses: 2,
      flu_participantFiles: 1,
      studyCodeLists: 1,
    });
    expect(summary.changed).toBe(13);
    expect(await state()).toEqual(rehearsed);
  });

  it("a file with a document bson cannot read is not checked: nothing of its collection is removed", async () => {
    const { summary, problems } = await run("final-unreadable", { prune: true, only: ["users"] });
    expect(summary.collections.find((c) => c.collection === "users")!.removed).toBe(0);
    expect(problems.map((p) => p.reason)).toContainEqual(
      "not checked for accounts earlier imports brought in and this dump no longer has: a document could not be read",
    );
    expect((await state()).users).toEqual(["ann@example.org", "bob@example.org"]);
  });

  it("a run resumed after a kill still counts the documents the killed run committed as present", async () => {
    // as if a run had committed bob's batch and died: the resumed run does not read bob again
    const usersFile = join(dir, "final", "case_tr_users", "users.bson");
    const killed = {
      fileBytes: (await stat(usersFile)).size,
      documentsDone: 1,
      completedAt: null,
      updatedAt: new Date(clock()),
    };
    await database.db
      .insert(caseImportCheckpoints)
      .values({ collection: "case_tr_users/users", ...killed })
      .onConflictDoUpdate({ target: caseImportCheckpoints.collection, set: killed });
    const { summary } = await run("final", { prune: true, dryRun: true, only: ["users"] });
    expect(summary.collections[0]).toMatchObject({ collection: "users", resumedAfter: 1, read: 0, removed: 1 });
    await database.db.delete(caseImportCheckpoints).where(eq(caseImportCheckpoints.collection, "case_tr_users/users"));
  });

  it("with --prune they go as studyflow removes them; a rerun then finds nothing", async () => {
    const { summary, problems } = await run("final", { prune: true });
    expect(problems.filter((p) => p.reason.startsWith("not in this dump"))).toEqual([]);
    expect(Object.values(removedIn(summary)).reduce((a, b) => a + b, 0)).toBe(13);
    expect(await state()).toEqual({
      ...rehearsed,
      // ann's account with its profile, confidential response and map entry; bob's removed response
      users: ["bob@example.org"],
      profiles: rehearsed.profiles - 1,
      confidential: ["conf-bob"],
      idMap: ["conf-bob"],
      // the admin with his grant; nina's app role; the revoked key
      researchers: ["nina@example.org"],
      permissions: rehearsed.permissions - 1,
      appRoles: 0,
      apiKeys: 0,
      emailTemplates: ["registration"],
      schedules: 0,
      // ann's mail, sent by CASE meanwhile, is not sent again
      pendingMails: ["bob@example.org"],
      researcherMessages: 1,
      // the file CASE deleted, and the code it drew, which studyflow must not hand out again
      files: [caseAccountUuid(keptFile._id.toHexString())],
      codes: ["KIT-1"],
    });
    await expect(verifyApiKey(database.db, CASE_API_KEY, new Date(clock()))).rejects.toThrow();
    const deletion = await database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.action, "participant-user.delete"), eq(auditLog.actor, "case-import")));
    expect(deletion).toHaveLength(1);
    expect(deletion[0]!.target).toBe(caseAccountUuid(fixture.ann._id.toHexString()));
    expect(JSON.stringify(deletion[0]!.details)).not.toContain("ann@example.org");
    // their records went with them
    const records = await database.db
      .select({ n: sql<number>`count(*)::int` })
      .from(caseImportRecords)
      .where(eq(caseImportRecords.sourceId, fixture.ann._id.toHexString()));
    expect(records[0]!.n).toBe(0);

    const again = await run("final", { prune: true });
    expect(removedIn(again.summary)).toEqual({});
    expect(again.summary.changed).toBe(0);
  });
});
