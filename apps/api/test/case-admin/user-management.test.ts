import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  accountDeletions,
  apiKeys,
  appRoles,
  auditLog,
  managementSessions,
  managementUsers,
  permissions,
  serviceAccounts,
  users,
} from "@studyflow/db";
import { createApiKey, hasPermission } from "@studyflow/domain/access";
import { bearer, caseRequest, managementToken, participantUser } from "../fixtures";
import { createTestApp, type TestApp } from "../test-app";
import { CASE_ADMIN_CALLS, caseAdminCall, replayCaseAdminCall, type CaseAdminCall } from "./replay";

describe("case-admin's user management (/v1/user-management)", () => {
  let t: TestApp;
  let adminId: string;
  let admin: string;
  let researcherId: string;
  let researcher: string;

  const addUser = async (email: string, isAdmin = false) => {
    const [row] = await t.database.db
      .insert(managementUsers)
      .values({ provider: "ms-entra", sub: `sub-${email}`, email, username: email.split("@")[0] ?? email, isAdmin })
      .returning();
    return row!;
  };
  const count = async (table: typeof auditLog | typeof permissions | typeof serviceAccounts | typeof apiKeys) =>
    (await t.database.db.select().from(table)).length;

  beforeAll(async () => {
    t = await createTestApp();
    adminId = (await addUser("root@example.org", true)).id;
    admin = await managementToken(t, adminId, true);
    researcherId = (await addUser("ana@example.org")).id;
    researcher = await managementToken(t, researcherId);
  });
  afterAll(async () => {
    await t.close();
  });

  describe("management users", () => {
    it("lists users: every field for admins, the short form for anyone else", async () => {
      const call = caseAdminCall("getManagementUsers");
      const full = await replayCaseAdminCall(t, call, { token: admin });
      expect(full.failed).toBe(false);
      const users = full.body.users as { id: string; createdAt?: string; lastLoginAt?: string }[];
      const root = users.find((user) => user.id === adminId);
      expect(root).toMatchObject({ email: "root@example.org", isAdmin: true, sub: "sub-root@example.org" });
      expect(root?.createdAt).toMatch(/^\d{4}-\d\d-\d\dT/);
      const ana = users.find((user) => user.id === researcherId);
      expect(ana).not.toHaveProperty("isAdmin");
      expect(ana?.lastLoginAt).toBe("0001-01-01T00:00:00Z");

      const brief = await replayCaseAdminCall(t, call, { token: researcher });
      expect(brief.status).toBe(200);
      // only what case-admin's study permission picker reads: no e-mail, provider or admin flag
      for (const user of brief.body.users) {
        expect(Object.keys(user).sort()).toEqual(["id", "imageUrl", "username"]);
      }
      expect((await replayCaseAdminCall(t, call)).status).toBe(401);
    });

    it("reads one user (admins only; unknown 404)", async () => {
      const call = caseAdminCall("getManagementUser");
      const answer = await replayCaseAdminCall(t, call, { token: admin, params: { userId: researcherId } });
      expect(answer.failed).toBe(false);
      expect(answer.body.user).toMatchObject({ id: researcherId, email: "ana@example.org" });
      const forbidden = await replayCaseAdminCall(t, call, { token: researcher, params: { userId: researcherId } });
      expect(forbidden.status).toBe(403);
      expect(forbidden.body.error).toMatch(/admin/);
      expect(
        (await replayCaseAdminCall(t, call, { token: admin, params: { userId: crypto.randomUUID() } })).status,
      ).toBe(404);
      expect((await replayCaseAdminCall(t, call, { token: admin, params: { userId: "not-an-id" } })).status).toBe(404);
      expect((await replayCaseAdminCall(t, call, { params: { userId: researcherId } })).status).toBe(401);
    });

    it("grants, lists, limits and removes a user's permissions as case-admin sends them", async () => {
      const create = caseAdminCall("createPermissionForManagementUser");
      const granted = await replayCaseAdminCall(t, create, {
        token: admin,
        params: { userID: researcherId },
        body: { resourceType: "study", resourceKey: "flu", action: "update-survey", limiter: null },
      });
      expect(granted.failed).toBe(false);
      expect(granted.body.permission).toMatchObject({
        subjectId: researcherId,
        subjectType: "management-user",
        resourceType: "study",
        resourceKey: "flu",
        action: "update-survey",
      });
      expect(granted.body.permission).not.toHaveProperty("limiter");
      const permissionId: string = granted.body.permission.id;
      const who = { subject: researcherId, isAdmin: false };
      const request = { resourceType: "study", resourceKeys: ["flu", "*"], action: "update-survey" } as const;
      expect(await hasPermission(t.database.db, who, { ...request, limiter: { surveyKey: "intake" } })).toBe(true);

      // case-insensitive keys, as gin binds them
      const second = await replayCaseAdminCall(t, create, {
        token: admin,
        params: { userID: researcherId },
        rawBody: JSON.stringify({ ResourceType: "users", resourceKEY: "*", action: "delete-users" }),
      });
      expect(second.status).toBe(200);

      const duplicate = await replayCaseAdminCall(t, create, {
        token: admin,
        params: { userID: researcherId },
        body: { resourceType: "study", resourceKey: "flu", action: "update-survey", limiter: null },
      });
      expect(duplicate.status).toBe(409);

      const list = await replayCaseAdminCall(t, permissionsCall("management-users"), {
        token: admin,
        params: { userId: researcherId },
      });
      expect(list.failed).toBe(false);
      expect((list.body.permissions as { action: string }[]).map((p) => p.action).sort()).toEqual([
        "delete-users",
        "update-survey",
      ]);

      const limit = caseAdminCall("updatePermissionLimiterForManagementUser");
      const limited = await replayCaseAdminCall(t, limit, {
        token: admin,
        params: { userID: researcherId, permissionID: permissionId },
        body: { limiter: [{ surveyKey: "intake" }] },
      });
      expect(limited.failed).toBe(false);
      expect(limited.body).toEqual({ message: "permission limiter updated" });
      await t.settle();
      expect(await hasPermission(t.database.db, who, { ...request, limiter: { surveyKey: "intake" } })).toBe(true);
      expect(await hasPermission(t.database.db, who, { ...request, limiter: { surveyKey: "other" } })).toBe(false);

      const remove = caseAdminCall("deletePermissionForManagementUser");
      // another user's permission is not this user's
      const elsewhere = await replayCaseAdminCall(t, remove, {
        token: admin,
        params: { userID: adminId, permissionID: permissionId },
      });
      expect(elsewhere.status).toBe(404);
      const removed = await replayCaseAdminCall(t, remove, {
        token: admin,
        params: { userID: researcherId, permissionID: permissionId },
      });
      expect(removed.failed).toBe(false);
      expect(removed.body).toEqual({ message: "permission deleted" });
      await t.settle();
      expect(await hasPermission(t.database.db, who, { ...request, limiter: { surveyKey: "intake" } })).toBe(false);
      expect(
        (
          await replayCaseAdminCall(t, remove, {
            token: admin,
            params: { userID: researcherId, permissionID: permissionId },
          })
        ).status,
      ).toBe(404);
      const audited = await t.database.db.select().from(auditLog).where(eq(auditLog.target, permissionId));
      expect(audited.map((row) => row.action).sort()).toEqual([
        "permission.grant",
        "permission.limiter.update",
        "permission.revoke",
      ]);
    });

    it("refuses bad permissions with 400 naming the field, and non-admins with 403, writing nothing", async () => {
      const create = caseAdminCall("createPermissionForManagementUser");
      const before = [await count(permissions), await count(auditLog)];
      const cases: [unknown, RegExp][] = [
        [{ resourceType: "study", resourceKey: "flu", action: "fly" }, /action/],
        [{ resourceType: "planets", resourceKey: "flu", action: "*" }, /resourceType/],
        [{ resourceType: "messaging", resourceKey: "flu", action: "*" }, /resourceKey/],
        [{ resourceType: "messaging", resourceKey: "sms-templates", action: "read" }, /action/],
        [{ resourceType: "users", resourceKey: "flu", action: "delete-users" }, /resourceKey/],
        [{ resourceType: "study", resourceKey: "", action: "*" }, /resourceKey/],
        [{ resourceType: "study", resourceKey: "flu", action: "*", limiter: [{}] }, /limiter/],
      ];
      for (const [body, field] of cases) {
        const answer = await replayCaseAdminCall(t, create, { token: admin, params: { userID: researcherId }, body });
        expect({ body, status: answer.status }).toEqual({ body, status: 400 });
        expect(answer.body.error).toMatch(field);
      }
      const empty = await replayCaseAdminCall(t, create, {
        token: admin,
        params: { userID: researcherId },
        rawBody: "",
      });
      expect(empty.status).toBe(400);
      const unknown = await replayCaseAdminCall(t, create, {
        token: admin,
        params: { userID: crypto.randomUUID() },
        body: { resourceType: "study", resourceKey: "flu", action: "*" },
      });
      expect(unknown).toMatchObject({ status: 400, body: { error: "user not found" } });
      const forbidden = await replayCaseAdminCall(t, create, {
        token: researcher,
        params: { userID: researcherId },
        body: { resourceType: "study", resourceKey: "*", action: "*" },
      });
      expect(forbidden.status).toBe(403);
      const anonymous = await replayCaseAdminCall(t, create, {
        params: { userID: researcherId },
        body: { resourceType: "study", resourceKey: "*", action: "*" },
      });
      expect(anonymous.status).toBe(401);
      expect([await count(permissions), await count(auditLog)]).toEqual(before);
    });

    it("deletes a user with sessions, permissions and app roles, and ends their tokens", async () => {
      const doomed = await addUser("leaving@example.org");
      const token = await managementToken(t, doomed.id);
      const db = t.database.db;
      await db.insert(managementSessions).values({
        userId: doomed.id,
        kind: "case-admin",
        expiresAt: new Date(Date.now() + 3_600_000),
      });
      await db.insert(permissions).values({ subjectId: doomed.id, studyKey: "flu", action: "read-study-config" });
      await db
        .insert(appRoles)
        .values({ subjectType: "management-user", subjectId: doomed.id, appName: "case-admin", role: "viewer" });
      // someone else's grant under the same id but another subject type stays
      await db
        .insert(permissions)
        .values({ subjectId: doomed.id, subjectType: "service-account", studyKey: "flu", action: "*" });
      const list = caseAdminCall("getManagementUsers");
      expect((await replayCaseAdminCall(t, list, { token })).status).toBe(200);

      const call = caseAdminCall("deleteManagementUser");
      const forbidden = await replayCaseAdminCall(t, call, { token: researcher, params: { userID: doomed.id } });
      expect(forbidden.status).toBe(403);
      expect(await db.select().from(managementUsers).where(eq(managementUsers.id, doomed.id))).toHaveLength(1);

      const deleted = await replayCaseAdminCall(t, call, { token: admin, params: { userID: doomed.id } });
      expect(deleted.failed).toBe(false);
      expect(deleted.body).toEqual({ message: "user deleted" });
      expect(await db.select().from(managementUsers).where(eq(managementUsers.id, doomed.id))).toEqual([]);
      expect(await db.select().from(managementSessions).where(eq(managementSessions.userId, doomed.id))).toEqual([]);
      expect(await db.select().from(appRoles).where(eq(appRoles.subjectId, doomed.id))).toEqual([]);
      const left = await db.select().from(permissions).where(eq(permissions.subjectId, doomed.id));
      expect(left.map((row) => row.subjectType)).toEqual(["service-account"]);
      await t.settle();
      const after = await replayCaseAdminCall(t, list, { token });
      expect(after.status).toBe(401);
      const [audit] = await db
        .select()
        .from(auditLog)
        .where(and(eq(auditLog.action, "management-user.delete"), eq(auditLog.target, doomed.id)));
      expect(audit).toMatchObject({ actor: adminId, details: { sessions: 1, permissions: 1, appRoles: 1 } });

      expect((await replayCaseAdminCall(t, call, { token: admin, params: { userID: doomed.id } })).status).toBe(404);
      const self = await replayCaseAdminCall(t, call, { token: admin, params: { userID: adminId } });
      expect(self).toMatchObject({ status: 400, body: { error: "user cannot delete itself" } });
    });
  });

  describe("app roles and their templates", () => {
    it("creates, reads, updates templates; gives and removes a user's role with its permissions", async () => {
      const db = t.database.db;
      const create = caseAdminCall("createAppRoleTemplate");
      const made = await replayCaseAdminCall(t, create, {
        token: admin,
        body: {
          appName: "study-portal",
          role: "viewer",
          requiredPermissions: [
            { resourceType: "study", resourceKey: "flu", action: "read-study-config" },
            { resourceType: "study", resourceKey: "flu", action: "get-responses", limiter: [{ surveyKey: "intake" }] },
          ],
        },
      });
      expect(made.failed).toBe(false);
      expect(made.body.message).toBe("app role template created");
      const templateId: string = made.body.appRoleTemplate.id;
      expect(made.path).toBe("/v1/user-management/app-roles/templates/");

      const list = await replayCaseAdminCall(t, caseAdminCall("getAppRoleTemplates"), { token: admin });
      expect(list.failed).toBe(false);
      expect(list.body.appRoleTemplates).toEqual([
        expect.objectContaining({
          id: templateId,
          appName: "study-portal",
          role: "viewer",
          requiredPermissions: [
            { resourceType: "study", resourceKey: "flu", action: "read-study-config" },
            { resourceType: "study", resourceKey: "flu", action: "get-responses", limiter: [{ surveyKey: "intake" }] },
          ],
        }),
      ]);
      const duplicate = await replayCaseAdminCall(t, create, {
        token: admin,
        body: { appName: "study-portal", role: "viewer", requiredPermissions: [] },
      });
      expect(duplicate.status).toBe(409);
      const badPermission = await replayCaseAdminCall(t, create, {
        token: admin,
        body: {
          appName: "x",
          role: "y",
          requiredPermissions: [{ resourceType: "study", resourceKey: "f", action: "z" }],
        },
      });
      expect(badPermission.status).toBe(400);
      expect(badPermission.body.error).toMatch(/requiredPermissions\[0\]\.action/);
      const blank = await replayCaseAdminCall(t, create, { token: admin, body: { appName: " ", role: "y" } });
      expect(blank.status).toBe(400);
      expect(blank.body.error).toMatch(/appName/);

      const read = await replayCaseAdminCall(t, caseAdminCall("getAppRoleTemplate"), {
        token: admin,
        params: { appRoleTemplateID: templateId },
      });
      expect(read.body.appRoleTemplate.role).toBe("viewer");

      // the user already holds "*" on flu for nothing; holds read-study-config already
      const holder = await addUser("holder@example.org");
      await db.insert(permissions).values({ subjectId: holder.id, studyKey: "flu", action: "read-study-config" });
      const give = caseAdminCall("createManagementUserAppRoleFromTemplate");
      const given = await replayCaseAdminCall(t, give, {
        token: admin,
        params: { userId: holder.id, appRoleTemplateId: templateId },
      });
      expect(given.failed).toBe(false);
      expect(given.body.message).toBe("user app role added");
      const held = await db.select().from(permissions).where(eq(permissions.subjectId, holder.id));
      expect(held.map((row) => [row.action, row.limiter]).sort()).toEqual([
        ["get-responses", [{ surveyKey: "intake" }]],
        ["read-study-config", null],
      ]);
      expect(
        (
          await replayCaseAdminCall(t, give, {
            token: admin,
            params: { userId: holder.id, appRoleTemplateId: templateId },
          })
        ).status,
      ).toBe(409);
      const nobody = await replayCaseAdminCall(t, give, {
        token: admin,
        params: { userId: crypto.randomUUID(), appRoleTemplateId: templateId },
      });
      expect(nobody).toMatchObject({ status: 400, body: { error: "user not found" } });
      expect(
        (
          await replayCaseAdminCall(t, give, {
            token: admin,
            params: { userId: holder.id, appRoleTemplateId: crypto.randomUUID() },
          })
        ).status,
      ).toBe(404);
      expect(
        (
          await replayCaseAdminCall(t, give, {
            token: researcher,
            params: { userId: holder.id, appRoleTemplateId: templateId },
          })
        ).status,
      ).toBe(403);

      const roles = await replayCaseAdminCall(t, caseAdminCall("getManagementUserAppRoles"), {
        token: admin,
        params: { userId: holder.id },
      });
      expect(roles.failed).toBe(false);
      expect(roles.body.appRoles).toEqual([
        expect.objectContaining({
          subjectId: holder.id,
          subjectType: "management-user",
          appName: "study-portal",
          role: "viewer",
        }),
      ]);
      const roleId: string = roles.body.appRoles[0].id;

      // updating the template leaves given roles and permissions alone
      const updated = await replayCaseAdminCall(t, caseAdminCall("updateAppRoleTemplate"), {
        token: admin,
        params: { appRoleTemplateID: templateId },
        body: { appName: "study-portal", role: "viewer", requiredPermissions: [] },
      });
      expect(updated).toMatchObject({ failed: false, body: { message: "app role template updated" } });
      expect(await db.select().from(permissions).where(eq(permissions.subjectId, holder.id))).toHaveLength(2);

      const removeRole = caseAdminCall("deleteManagementUserAppRole");
      expect(
        (await replayCaseAdminCall(t, removeRole, { token: admin, params: { userId: adminId, appRoleId: roleId } }))
          .status,
      ).toBe(404);
      const removed = await replayCaseAdminCall(t, removeRole, {
        token: admin,
        params: { userId: holder.id, appRoleId: roleId },
      });
      expect(removed).toMatchObject({ failed: false, body: { message: "user app role deleted" } });
      expect(await db.select().from(appRoles).where(eq(appRoles.subjectId, holder.id))).toEqual([]);
      // the role's permissions stay, as in case-backend
      expect(await db.select().from(permissions).where(eq(permissions.subjectId, holder.id))).toHaveLength(2);

      // deleting the template removes the roles made from it
      await replayCaseAdminCall(t, give, {
        token: admin,
        params: { userId: holder.id, appRoleTemplateId: templateId },
      });
      const dropped = await replayCaseAdminCall(t, caseAdminCall("deleteAppRoleTemplate"), {
        token: admin,
        params: { appRoleTemplateID: templateId },
      });
      expect(dropped).toMatchObject({ failed: false, body: { message: "app role template deleted" } });
      expect(await db.select().from(appRoles).where(eq(appRoles.subjectId, holder.id))).toEqual([]);
      expect(
        (
          await replayCaseAdminCall(t, caseAdminCall("getAppRoleTemplate"), {
            token: admin,
            params: { appRoleTemplateID: templateId },
          })
        ).status,
      ).toBe(404);

      // every template and role of an app
      await replayCaseAdminCall(t, create, {
        token: admin,
        body: { appName: "portal-2", role: "a", requiredPermissions: null },
      });
      const second = await replayCaseAdminCall(t, create, { token: admin, body: { appName: "portal-2", role: "b" } });
      await replayCaseAdminCall(t, give, {
        token: admin,
        params: { userId: holder.id, appRoleTemplateId: second.body.appRoleTemplate.id },
      });
      const forApp = await replayCaseAdminCall(t, caseAdminCall("deleteAppRoleTemplatesForApp"), {
        token: admin,
        params: { appName: "portal-2" },
      });
      expect(forApp).toMatchObject({ failed: false, body: { message: "app role template deleted" } });
      const left = await replayCaseAdminCall(t, caseAdminCall("getAppRoleTemplates"), { token: admin });
      expect(left.body.appRoleTemplates).toEqual([]);
      expect(await db.select().from(appRoles).where(eq(appRoles.subjectId, holder.id))).toEqual([]);
      const audited = await db.select({ action: auditLog.action }).from(auditLog);
      expect(audited.map((row) => row.action)).toEqual(
        expect.arrayContaining([
          "app-role-template.create",
          "app-role-template.update",
          "app-role-template.delete",
          "app-role-template.delete-for-app",
          "app-role.add",
          "app-role.remove",
        ]),
      );
    });

    it("answers non-admins 403 and writes nothing", async () => {
      const before = await count(auditLog);
      const forbidden = await replayCaseAdminCall(t, caseAdminCall("createAppRoleTemplate"), {
        token: researcher,
        body: { appName: "a", role: "b", requiredPermissions: [] },
      });
      expect(forbidden.status).toBe(403);
      expect((await replayCaseAdminCall(t, caseAdminCall("getAppRoleTemplates"), { token: researcher })).status).toBe(
        403,
      );
      expect(
        (
          await replayCaseAdminCall(t, caseAdminCall("deleteAppRoleTemplatesForApp"), {
            token: researcher,
            params: { appName: "a" },
          })
        ).status,
      ).toBe(403);
      expect((await replayCaseAdminCall(t, caseAdminCall("getAppRoleTemplates"))).status).toBe(401);
      expect(await count(auditLog)).toBe(before);
    });
  });

  describe("participant-user deletion requests", () => {
    it("starts the account's deletion for a holder of users/*/delete-users, by e-mail address", async () => {
      const db = t.database.db;
      const { user } = await participantUser(t, ["main"], "leaving.participant@example.org");
      const call = caseAdminCall("requestDeletionForParticipantUser");
      const before = [await count(auditLog), (await db.select().from(accountDeletions)).length];
      // no permission (a study grant is not one): 403, nothing written
      const bystander = await addUser("bystander@example.org");
      await db.insert(permissions).values({ subjectId: bystander.id, studyKey: "*", action: "*" });
      const bystanderToken = await managementToken(t, bystander.id);
      const forbidden = await replayCaseAdminCall(t, call, { token: bystanderToken, body: { email: user.email } });
      expect(forbidden.status).toBe(403);
      expect([await count(auditLog), (await db.select().from(accountDeletions)).length]).toEqual(before);

      const deleter = await addUser("deleter@example.org");
      await db
        .insert(permissions)
        .values({ subjectId: deleter.id, resourceType: "users", studyKey: "*", action: "delete-users" });
      const token = await managementToken(t, deleter.id);
      for (const [email, error] of [
        ["not-an-address", /email/],
        ["nobody@example.org", /^user could not be deleted$/],
      ] as const) {
        const answer = await replayCaseAdminCall(t, call, { token, body: { email } });
        expect(answer.status).toBe(400);
        expect(answer.body.error).toMatch(error);
      }
      expect((await replayCaseAdminCall(t, call, { token, rawBody: "" })).status).toBe(400);
      expect((await replayCaseAdminCall(t, call, { body: { email: user.email } })).status).toBe(401);
      expect([await count(auditLog), (await db.select().from(accountDeletions)).length]).toEqual(before);

      const answer = await replayCaseAdminCall(t, call, { token, body: { email: "Leaving.Participant@example.org" } });
      expect(answer.failed).toBe(false);
      expect(answer.body).toMatchObject({ message: "user deleted", deletion: { status: "pending" } });
      const [deletion] = await db.select().from(accountDeletions).where(eq(accountDeletions.userId, user.id));
      expect(deletion).toBeDefined();
      const [marked] = await db.select().from(users).where(eq(users.id, user.id));
      expect(marked?.deletionRequestedAt).not.toBeNull();
      const [audit] = await db
        .select()
        .from(auditLog)
        .where(and(eq(auditLog.action, "participant-user.delete-request"), eq(auditLog.actor, deleter.id)));
      expect(audit).toBeDefined();
    });
  });

  describe("service accounts", () => {
    it("creates, lists, reads, updates and deletes an account with keys and permissions", async () => {
      const created = await replayCaseAdminCall(t, caseAdminCall("createServiceAccount"), {
        token: admin,
        body: { label: "exporter", description: "nightly export" },
      });
      expect(created.failed).toBe(false);
      const account = created.body.serviceAccount;
      expect(account).toMatchObject({ label: "exporter", description: "nightly export" });
      const id: string = account.id;

      const list = await replayCaseAdminCall(t, caseAdminCall("getServiceAccounts"), { token: admin });
      expect(list.failed).toBe(false);
      expect((list.body.serviceAccounts as { id: string }[]).map((a) => a.id)).toContain(id);
      const slashed = await t.app.request("/v1/user-management/service-accounts/", {
        headers: { authorization: `Bearer ${admin}` },
      });
      expect(slashed.status).toBe(200);

      const read = await replayCaseAdminCall(t, caseAdminCall("getServiceAccount"), {
        token: admin,
        params: { serviceAccountID: id },
      });
      expect(read.body.serviceAccount).toMatchObject({ id, label: "exporter" });

      const updated = await replayCaseAdminCall(t, caseAdminCall("updateServiceAccount"), {
        token: admin,
        params: { serviceAccountId: id },
        body: { label: "exporter 2", description: "" },
      });
      expect(updated).toMatchObject({ failed: false, body: { success: true } });
      const [row] = await t.database.db.select().from(serviceAccounts).where(eq(serviceAccounts.id, id));
      expect(row).toMatchObject({ label: "exporter 2", description: "" });

      // permissions
      const grant = CASE_ACCOUNT_CALLS.createPermission;
      const granted = await replayCaseAdminCall(t, caseAdminCall(grant), {
        token: admin,
        params: { serviceAccountId: id },
        body: { resourceType: "study", resourceKey: "flu", action: "get-responses", limiter: null },
      });
      expect(granted.failed).toBe(false);
      expect(granted.body.permission).toMatchObject({ subjectId: id, subjectType: "service-account" });
      const perms = await replayCaseAdminCall(t, permissionsCall("service-accounts"), {
        token: admin,
        params: { serviceAccountId: id },
      });
      expect(perms.body.permissions).toHaveLength(1);

      // keys: made, shown whole in the creator's next list (where case-admin's dialog shows and copies
      // it) and by a hint after that, usable, deleted
      const keyCall = caseAdminCall("createServiceAccountAPIKey");
      const made = await replayCaseAdminCall(t, keyCall, {
        token: admin,
        params: { serviceAccountId: id },
        body: { expiresAt: Math.floor(Date.now() / 1000) + 30 * 86_400 },
      });
      expect(made.failed).toBe(false);
      expect(made.body.success).toBe(true);
      const key: string = made.body.apiKey.key;
      expect(key).toMatch(/^sf_/);
      const keys = await replayCaseAdminCall(t, caseAdminCall("getServiceAccountAPIKeys"), {
        token: admin,
        params: { serviceAccountId: id },
      });
      expect(keys.failed).toBe(false);
      expect(keys.body.apiKeys).toEqual([
        expect.objectContaining({
          id: made.body.apiKey.id,
          serviceUserId: id,
          key,
          lastUsedAt: "0001-01-01T00:00:00Z",
        }),
      ]);
      const relisted = await replayCaseAdminCall(t, caseAdminCall("getServiceAccountAPIKeys"), {
        token: admin,
        params: { serviceAccountId: id },
      });
      expect(relisted.body.apiKeys).toEqual([
        expect.objectContaining({ id: made.body.apiKey.id, serviceUserId: id, key: `${key.slice(0, 11)}…` }),
      ]);
      // the key acts as its account: the account's grants, not a management user's of that id
      const asAccount = await t.app.request("/v1/auth/permissions", { headers: { "X-API-Key": key } });
      expect(asAccount.status).toBe(200);
      expect(await asAccount.json()).toMatchObject({
        isAdmin: false,
        permissions: [{ subjectId: id, subjectType: "service-account", resourceKey: "flu", action: "get-responses" }],
      });
      const asKey = () => t.app.request("/v1/user-management/management-users", { headers: { "x-api-key": key } });
      expect((await asKey()).status).toBe(200);

      // a second key, without expiry: 90 days
      const defaulted = await replayCaseAdminCall(t, keyCall, {
        token: admin,
        params: { serviceAccountId: id },
        body: {},
      });
      const days = (Date.parse(defaulted.body.apiKey.expiresAt) - Date.now()) / 86_400_000;
      expect(Math.round(days)).toBe(90);

      const dropKey = caseAdminCall("deleteServiceAccountAPIKey");
      const dropped = await replayCaseAdminCall(t, dropKey, {
        token: admin,
        params: { serviceAccountId: id, apiKeyId: made.body.apiKey.id },
      });
      expect(dropped).toMatchObject({ failed: false, body: { success: true } });
      await t.settle();
      expect((await asKey()).status).toBe(401);
      expect(
        (
          await replayCaseAdminCall(t, dropKey, {
            token: admin,
            params: { serviceAccountId: id, apiKeyId: made.body.apiKey.id },
          })
        ).status,
      ).toBe(404);

      // the permission goes
      const dropPermission = await replayCaseAdminCall(t, caseAdminCall("deletePermissionForServiceAccount"), {
        token: admin,
        params: { serviceAccountId: id, permissionId: granted.body.permission.id },
      });
      expect(dropPermission).toMatchObject({ failed: false, body: { message: "permission deleted" } });

      // deleting the account removes its remaining key and grants
      await replayCaseAdminCall(t, caseAdminCall(grant), {
        token: admin,
        params: { serviceAccountId: id },
        body: { resourceType: "messaging", resourceKey: "sms-templates", action: "*" },
      });
      const remainingKey: string = defaulted.body.apiKey.key;
      const deleted = await replayCaseAdminCall(t, caseAdminCall("deleteServiceAccount"), {
        token: admin,
        params: { serviceAccountId: id },
      });
      expect(deleted).toMatchObject({ failed: false, body: { success: true } });
      expect(await t.database.db.select().from(apiKeys).where(eq(apiKeys.serviceAccountId, id))).toEqual([]);
      expect(await t.database.db.select().from(permissions).where(eq(permissions.subjectId, id))).toEqual([]);
      await t.settle();
      const gone = await t.app.request("/v1/user-management/management-users", {
        headers: { "x-api-key": remainingKey },
      });
      expect(gone.status).toBe(401);
      const again = await replayCaseAdminCall(t, caseAdminCall("getServiceAccount"), {
        token: admin,
        params: { serviceAccountID: id },
      });
      expect(again.status).toBe(404);
    });

    it("refuses non-admins (403), unknown accounts and bad input, writing nothing", async () => {
      const before = [
        await count(serviceAccounts),
        await count(apiKeys),
        await count(permissions),
        await count(auditLog),
      ];
      const forbidden = await replayCaseAdminCall(t, caseAdminCall("createServiceAccount"), {
        token: researcher,
        body: { label: "x", description: "" },
      });
      expect(forbidden.status).toBe(403);
      expect((await replayCaseAdminCall(t, caseAdminCall("getServiceAccounts"), { token: researcher })).status).toBe(
        403,
      );
      expect((await replayCaseAdminCall(t, caseAdminCall("getServiceAccounts"))).status).toBe(401);
      const blank = await replayCaseAdminCall(t, caseAdminCall("createServiceAccount"), {
        token: admin,
        body: { label: "  ", description: "" },
      });
      expect(blank.status).toBe(400);
      expect(blank.body.error).toMatch(/label/);
      const missing = crypto.randomUUID();
      const keyForNobody = await replayCaseAdminCall(t, caseAdminCall("createServiceAccountAPIKey"), {
        token: admin,
        params: { serviceAccountId: missing },
        body: {},
      });
      expect(keyForNobody).toMatchObject({ status: 400, body: { error: "service account not found" } });
      const grantForNobody = await replayCaseAdminCall(t, caseAdminCall(CASE_ACCOUNT_CALLS.createPermission), {
        token: admin,
        params: { serviceAccountId: missing },
        body: { resourceType: "study", resourceKey: "*", action: "*" },
      });
      expect(grantForNobody).toMatchObject({ status: 400, body: { error: "service account not found" } });
      const update = await replayCaseAdminCall(t, caseAdminCall("updateServiceAccount"), {
        token: admin,
        params: { serviceAccountId: missing },
        body: { label: "x", description: "" },
      });
      expect(update.status).toBe(404);

      // an existing account: too late an expiry, a negative one
      const [account] = await t.database.db
        .insert(serviceAccounts)
        .values({ label: "probe", createdBy: adminId })
        .returning();
      const counted = [
        await count(serviceAccounts),
        await count(apiKeys),
        await count(permissions),
        await count(auditLog),
      ];
      for (const expiresAt of [Math.floor(Date.now() / 1000) + 401 * 86_400, Math.floor(Date.now() / 1000) - 60, -5]) {
        const answer = await replayCaseAdminCall(t, caseAdminCall("createServiceAccountAPIKey"), {
          token: admin,
          params: { serviceAccountId: account!.id },
          body: { expiresAt },
        });
        expect({ expiresAt, status: answer.status }).toEqual({ expiresAt, status: 400 });
        expect(answer.body.error).toMatch(/expiresAt/);
      }
      expect([
        await count(serviceAccounts),
        await count(apiKeys),
        await count(permissions),
        await count(auditLog),
      ]).toEqual(counted);
      expect(counted).toEqual([before[0]! + 1, before[1], before[2], before[3]]);
    });

    it("lists a key made by the older service-key route by its hint too", async () => {
      const [account] = await t.database.db
        .insert(serviceAccounts)
        .values({ label: "legacy", createdBy: adminId })
        .returning();
      const made = await createApiKey(t.database.db, { now: new Date(), subject: account!.id, createdBy: "cli" });
      await t.database.db.update(apiKeys).set({ serviceAccountId: account!.id }).where(eq(apiKeys.id, made.apiKey.id));
      const keys = await replayCaseAdminCall(t, caseAdminCall("getServiceAccountAPIKeys"), {
        token: admin,
        params: { serviceAccountId: account!.id },
      });
      expect(keys.body.apiKeys).toEqual([expect.objectContaining({ key: `${made.apiKey.keyPrefix}…` })]);
      expect(made.key.startsWith(made.apiKey.keyPrefix)).toBe(true);
    });
  });

  // case-backend serves these; case-admin does not call them (so no replay): requests as case-backend reads them.
  describe("routes case-backend serves beyond case-admin's calls", () => {
    const umPath = (path: string) => `/v1/user-management${path}`;
    const send = (method: string, path: string, token?: string, body?: unknown) =>
      body === undefined
        ? t.app.request(umPath(path), { method, headers: token ? bearer(token) : {} })
        : caseRequest(t, method, umPath(path), body, token);

    it("PUT …/service-accounts/{id}/permissions/{pid}/limiter sets the limiter of the account's own permission", async () => {
      const db = t.database.db;
      const [account] = await db.insert(serviceAccounts).values({ label: "limits", createdBy: adminId }).returning();
      const [other] = await db.insert(serviceAccounts).values({ label: "other", createdBy: adminId }).returning();
      const granted = await send("POST", `/service-accounts/${account!.id}/permissions`, admin, {
        resourceType: "study",
        resourceKey: "flu",
        action: "get-responses",
      });
      expect(granted.status).toBe(200);
      const permissionId = ((await granted.json()) as { permission: { id: string } }).permission.id;
      const limitPath = `/service-accounts/${account!.id}/permissions/${permissionId}/limiter`;
      const asAccount = { subject: account!.id, isAdmin: false, subjectType: "service-account" } as const;
      const request = { resourceType: "study", resourceKeys: ["flu", "*"], action: "get-responses" } as const;

      const limited = await send("PUT", limitPath, admin, { Limiter: [{ surveyKey: "intake" }] });
      expect(limited.status).toBe(200);
      expect(await limited.json()).toEqual({ message: "permission limiter updated" });
      await t.settle();
      expect(await hasPermission(db, asAccount, { ...request, limiter: { surveyKey: "intake" } })).toBe(true);
      expect(await hasPermission(db, asAccount, { ...request, limiter: { surveyKey: "other" } })).toBe(false);
      const [audit] = await db
        .select()
        .from(auditLog)
        .where(and(eq(auditLog.action, "permission.limiter.update"), eq(auditLog.target, permissionId)));
      expect(audit).toMatchObject({
        actor: adminId,
        details: { subjectType: "service-account", subjectId: account!.id, from: null, to: [{ surveyKey: "intake" }] },
      });

      // null: unlimited again
      const cleared = await send("PUT", limitPath, admin, { limiter: null });
      expect(cleared.status).toBe(200);
      await t.settle();
      expect(await hasPermission(db, asAccount, { ...request, limiter: { surveyKey: "other" } })).toBe(true);

      const before = [await count(permissions), await count(auditLog)];
      const refusals: [string, string | undefined, unknown, number][] = [
        [limitPath, researcher, { limiter: [{ surveyKey: "x" }] }, 403],
        [limitPath, undefined, { limiter: [{ surveyKey: "x" }] }, 401],
        [limitPath, admin, { limiter: [{}] }, 400],
        [limitPath, admin, { limiter: "everything" }, 400],
        // another account's permission, an unknown one, one that cannot be an id
        [`/service-accounts/${other!.id}/permissions/${permissionId}/limiter`, admin, { limiter: null }, 404],
        [`/service-accounts/${account!.id}/permissions/999999999/limiter`, admin, { limiter: null }, 404],
        [`/service-accounts/${account!.id}/permissions/not-a-number/limiter`, admin, { limiter: null }, 404],
      ];
      for (const [path, token, body, status] of refusals) {
        const answer = await send("PUT", path, token, body);
        expect({ path, body, status: answer.status }).toEqual({ path, body, status });
        expect(Object.keys((await answer.json()) as object)).toEqual(["error"]);
      }
      const empty = await t.app.request(umPath(limitPath), { method: "PUT", headers: bearer(admin), body: "" });
      expect(empty.status).toBe(400);
      expect([await count(permissions), await count(auditLog)]).toEqual(before);
      const [row] = await db
        .select()
        .from(permissions)
        .where(eq(permissions.id, Number(permissionId)));
      expect(row?.limiter).toBeNull();
    });

    it("GET /app-roles lists every subject's app roles, to admins only", async () => {
      const db = t.database.db;
      const holder = await addUser("roles-list@example.org");
      await db.insert(appRoles).values([
        { subjectType: "management-user", subjectId: holder.id, appName: "listed-app", role: "viewer" },
        { subjectType: "service-account", subjectId: crypto.randomUUID(), appName: "listed-app", role: "editor" },
      ]);
      for (const path of ["/app-roles", "/app-roles/"]) {
        const listed = await send("GET", path, admin);
        expect(listed.status, path).toBe(200);
        const { appRoles: roles } = (await listed.json()) as { appRoles: Record<string, unknown>[] };
        const ours = roles.filter((role) => role.appName === "listed-app");
        expect(ours).toEqual([
          {
            id: expect.any(String),
            subjectId: expect.any(String),
            subjectType: "service-account",
            appName: "listed-app",
            role: "editor",
            createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          },
          expect.objectContaining({ subjectId: holder.id, subjectType: "management-user", role: "viewer" }),
        ]);
      }
      const forbidden = await send("GET", "/app-roles", researcher);
      expect(forbidden.status).toBe(403);
      expect(((await forbidden.json()) as { error: string }).error).toMatch(/admin/);
      expect((await send("GET", "/app-roles")).status).toBe(401);
    });

    it("DELETE /app-roles/delete/{appName} removes the app's roles only, keeping templates and permissions", async () => {
      const db = t.database.db;
      const holder = await addUser("roles-drop@example.org");
      const template = await send("POST", "/app-roles/templates", admin, {
        appName: "dropped-app",
        role: "viewer",
        requiredPermissions: [{ resourceType: "study", resourceKey: "flu", action: "read-study-config" }],
      });
      const templateId = ((await template.json()) as { appRoleTemplate: { id: string } }).appRoleTemplate.id;
      const given = await send("POST", `/management-users/${holder.id}/app-roles/${templateId}`, admin);
      expect(given.status).toBe(200);
      await db.insert(appRoles).values([
        { subjectType: "service-account", subjectId: crypto.randomUUID(), appName: "dropped-app", role: "bot" },
        { subjectType: "management-user", subjectId: holder.id, appName: "kept-app", role: "viewer" },
      ]);
      const rolesOf = async (appName: string) =>
        (await db.select().from(appRoles).where(eq(appRoles.appName, appName))).length;

      // refused: nothing removed, nothing audited
      const before = await count(auditLog);
      expect((await send("DELETE", "/app-roles/delete/dropped-app", researcher)).status).toBe(403);
      expect((await send("DELETE", "/app-roles/delete/dropped-app")).status).toBe(401);
      const blank = await send("DELETE", "/app-roles/delete/%20%20", admin);
      expect(blank.status).toBe(400);
      expect(((await blank.json()) as { error: string }).error).toMatch(/appName/);
      expect([await rolesOf("dropped-app"), await count(auditLog)]).toEqual([2, before]);

      const dropped = await send("DELETE", "/app-roles/delete/dropped-app", admin);
      expect(dropped.status).toBe(200);
      expect(await dropped.json()).toEqual({ message: "app roles deleted" });
      expect([await rolesOf("dropped-app"), await rolesOf("kept-app")]).toEqual([0, 1]);
      // the template and the permission the role granted stay, as in case-backend
      expect((await send("GET", `/app-roles/templates/${templateId}`, admin)).status).toBe(200);
      expect(await db.select().from(permissions).where(eq(permissions.subjectId, holder.id))).toHaveLength(1);
      const [audit] = await db
        .select()
        .from(auditLog)
        .where(and(eq(auditLog.action, "app-role.delete-for-app"), eq(auditLog.target, "dropped-app")));
      expect(audit).toMatchObject({ actor: adminId, details: { appRoles: 2 } });

      // an app without roles answers the same
      const again = await send("DELETE", "/app-roles/delete/dropped-app", admin);
      expect(again.status).toBe(200);
    });
  });
});

const CASE_ACCOUNT_CALLS = { createPermission: "createPermissionForServiceAccount" } as const;

/** case-admin's getPermissions of management users or of service accounts (one name, two calls). */
function permissionsCall(group: "management-users" | "service-accounts"): CaseAdminCall {
  const found = CASE_ADMIN_CALLS.find((call) => call.func === "getPermissions" && call.url.includes(group));
  if (!found) throw new Error(`no getPermissions call for ${group}`);
  return found;
}
