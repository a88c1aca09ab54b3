import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  auditLog,
  permissions,
  studyCodeLists,
  studyCounters,
  studyVariables,
  type PermissionAction,
} from "@studyflow/db";
import { addStudyCodes } from "@studyflow/domain/study-config";
import { bearer, managementToken, setupStudy } from "../fixtures";
import { createTestApp, type TestApp } from "../test-app";
import { caseAdminCall, replayCaseAdminCall, type ReplayOptions } from "./replay";

/**
 * case-admin's study configurator on study configuration data (CASE §3b): code lists, study
 * counters and study variables, each call replayed as case-admin makes it (text/plain bodies) and
 * its answer read as case-admin reads it.
 */
describe("case-admin: study code lists, counters and variables", () => {
  let t: TestApp;
  let admin: string;
  let manager: string;
  const studyKey = "flu-watch";
  const replay = (func: string, options: ReplayOptions = {}) =>
    replayCaseAdminCall(t, caseAdminCall(func), {
      token: manager,
      ...options,
      params: { studyKey, ...options.params },
    });
  const auditCount = async () => (await t.database.db.select().from(auditLog)).length;
  const codesOf = async (listKey: string) =>
    (
      await t.database.db
        .select({ code: studyCodeLists.code })
        .from(studyCodeLists)
        .where(and(eq(studyCodeLists.studyKey, studyKey), eq(studyCodeLists.listKey, listKey)))
        .orderBy(studyCodeLists.id)
    ).map((row) => row.code);
  /** A study grant with a CASE action name, as case-admin's permission pages make them. */
  const grant = (subjectId: string, key: string, action: PermissionAction) =>
    t.database.db.insert(permissions).values({ subjectId, studyKey: key, action });
  const researcher = async (_: TestApp, key: string, action: PermissionAction) => {
    const subject = `researcher-${Math.random().toString(36).slice(2, 10)}`;
    await grant(subject, key, action);
    return { subject, token: await managementToken(t, subject) };
  };
  const counters = async () =>
    t.database.db
      .select({ scope: studyCounters.scope, value: studyCounters.value })
      .from(studyCounters)
      .where(eq(studyCounters.studyKey, studyKey))
      .orderBy(studyCounters.scope);

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: studyKey });
    await setupStudy(t, { key: "diet-study" });
    admin = await managementToken(t, "root", true);
    manager = await managementToken(t, "configurator");
    for (const action of ["manage-study-code-lists", "manage-study-counters", "manage-study-variables"] as const) {
      await grant("configurator", studyKey, action);
    }
  });
  afterAll(async () => {
    await t.close();
  });

  describe("code lists", () => {
    it("adds codes (errors per code), lists keys, pages codes, removes a code and a whole list", async () => {
      const added = await replay("addStudyCodeListEntries", {
        body: { listKey: " kit-codes ", codes: ["KIT-1", " KIT-2 ", "", "KIT-1", "KIT-3"] },
      });
      expect(added.failed).toBe(false);
      expect(added.body).toEqual({
        errors: ["empty code cannot be added", "code 'KIT-1' is already in list 'kit-codes'"],
      });
      expect(await codesOf("kit-codes")).toEqual(["KIT-1", "KIT-2", "KIT-3"]);
      await addStudyCodes(t.database.db, studyKey, "invites", ["INV-1"], "test");

      const keys = await replay("getStudyCodeListKeys");
      expect(keys.failed).toBe(false);
      expect(keys.body).toEqual({ listKeys: ["invites", "kit-codes"] });

      const page = await replay("getStudyCodeListEntries", {
        params: { "params.toString()": "listKey=kit-codes&page=2&limit=2" },
      });
      expect(page.failed).toBe(false);
      expect(page.body).toEqual({
        codeList: [
          {
            id: expect.stringMatching(/^\d+$/),
            studyKey,
            listKey: "kit-codes",
            code: "KIT-3",
            addedAt: expect.any(String),
          },
        ],
        pagination: { totalCount: 3, currentPage: 2, totalPages: 2, pageSize: 2 },
      });
      // case-admin asks for up to 1000 codes at once
      const all = await replay("getStudyCodeListEntries", {
        params: { "params.toString()": "listKey=kit-codes&page=1&limit=1000" },
      });
      const entries = all.body.codeList as { code: string }[];
      expect(entries.map((entry) => entry.code)).toEqual(["KIT-1", "KIT-2", "KIT-3"]);
      expect(new Date(all.body.codeList[0].addedAt).toISOString()).toBe(all.body.codeList[0].addedAt);

      const removed = await replay("deleteStudyCodeListEntry", {
        params: { listKey: "kit-codes", codeQuery: "&code=KIT-2" },
      });
      expect(removed.failed).toBe(false);
      expect(removed.body).toEqual({ success: true });
      expect(await codesOf("kit-codes")).toEqual(["KIT-1", "KIT-3"]);

      const whole = await replay("deleteStudyCodeListEntry", { params: { listKey: "kit-codes", codeQuery: "" } });
      expect(whole.failed).toBe(false);
      expect(await codesOf("kit-codes")).toEqual([]);
      expect(await codesOf("invites")).toEqual(["INV-1"]);
      const audit = await t.database.db
        .select()
        .from(auditLog)
        .where(eq(auditLog.target, "kit-codes"))
        .orderBy(auditLog.id);
      expect(audit.map((e) => [e.actor, e.action, e.details])).toEqual([
        ["configurator", "code-list.add", { added: 3, skipped: 1 }],
        ["configurator", "code-list.remove", { code: "KIT-2" }],
        ["configurator", "code-list.delete", { removed: 2 }],
      ]);
    });

    it("400 naming listKey or page, 404 for a code or list not there; nothing written", async () => {
      const before = await auditCount();
      const noList = await replay("addStudyCodeListEntries", { body: { listKey: "  ", codes: ["A"] } });
      expect(noList.status).toBe(400);
      expect(noList.body.error).toMatch(/listKey: must not be blank/);
      const notStrings = await replay("addStudyCodeListEntries", { body: { listKey: "x", codes: [1] } });
      expect(notStrings.status).toBe(400);
      expect(notStrings.body.error).toMatch(/codes/);
      const tooMany = await replay("addStudyCodeListEntries", {
        body: { listKey: "x", codes: Array.from({ length: 10_001 }, (_, i) => `C${i}`) },
      });
      expect(tooMany.status).toBe(400);
      expect(tooMany.body.error).toMatch(/at most 10000 codes/);
      const empty = await replay("addStudyCodeListEntries", { rawBody: "" });
      expect(empty.status).toBe(400);
      expect(empty.body.error).toMatch(/^body: required/);
      for (const query of ["page=1", "listKey=x&page=one", "listKey=x&limit=1.5"]) {
        const res = await replay("getStudyCodeListEntries", { params: { "params.toString()": query } });
        expect(res.status, query).toBe(400);
        expect(res.body.error, query).toMatch(/listKey|page|limit/);
      }
      const noKey = await t.app.request(`/v1/studies/${studyKey}/study-code-list/codes`, {
        method: "DELETE",
        headers: bearer(manager),
      });
      expect(noKey.status).toBe(400);
      expect((await noKey.json()).error).toMatch(/listKey/);
      const noCode = await replay("deleteStudyCodeListEntry", {
        params: { listKey: "invites", codeQuery: "&code=NOPE" },
      });
      expect(noCode.status).toBe(404);
      expect(noCode.failed).toBe(true);
      const noList404 = await replay("deleteStudyCodeListEntry", { params: { listKey: "nope", codeQuery: "" } });
      expect(noList404.status).toBe(404);
      expect(await codesOf("invites")).toEqual(["INV-1"]);
      expect(await codesOf("x")).toEqual([]);
      expect(await auditCount()).toBe(before);
    });

    it("reads with read-study-config or manage-code-lists, writes only with manage-study-code-lists (or its alias)", async () => {
      const reader = await researcher(t, studyKey, "read-study-config");
      expect((await replay("getStudyCodeListKeys", { token: reader.token })).status).toBe(200);
      const denied = await replay("addStudyCodeListEntries", {
        token: reader.token,
        body: { listKey: "x", codes: ["A"] },
      });
      expect(denied.status).toBe(403);
      const legacy = await researcher(t, studyKey, "manage-code-lists");
      const allowed = await replay("addStudyCodeListEntries", {
        token: legacy.token,
        body: { listKey: "y", codes: ["A"] },
      });
      expect(allowed.status).toBe(200);
      expect(await codesOf("y")).toEqual(["A"]);
      expect(await codesOf("x")).toEqual([]);
    });
  });

  describe("study counters", () => {
    it("saves, increments (a missing one becomes 1), lists and removes counters, audited", async () => {
      const saved = await replay("saveStudyCounter", { params: { scope: "kit-orders" }, body: { value: 41 } });
      expect(saved.failed).toBe(false);
      expect(saved.body).toEqual({ value: 41 });
      const incremented = await replay("incrementStudyCounter", { params: { scope: "kit-orders" } });
      expect(incremented.failed).toBe(false);
      expect(incremented.body).toEqual({ value: 42 });
      expect((await replay("incrementStudyCounter", { params: { scope: "fresh" } })).body).toEqual({ value: 1 });

      const listed = await replay("getStudyCounters");
      expect(listed.failed).toBe(false);
      expect(listed.body).toEqual({
        values: [
          { studyKey, scope: "fresh", value: 1 },
          { studyKey, scope: "kit-orders", value: 42 },
        ],
      });
      // the group root with its trailing slash, as gin serves it
      const slashed = await t.app.request(`/v1/studies/${studyKey}/study-counters/`, { headers: bearer(manager) });
      expect(slashed.status).toBe(200);

      const removed = await replay("deleteStudyCounter", { params: { scope: "fresh" } });
      expect(removed.failed).toBe(false);
      expect(removed.body).toEqual({ success: true });
      expect(await counters()).toEqual([{ scope: "kit-orders", value: 42 }]);
      const audit = await t.database.db
        .select()
        .from(auditLog)
        .where(eq(auditLog.action, "study-counter.set"))
        .orderBy(auditLog.id);
      expect(audit.map((e) => [e.actor, e.target, e.details])).toEqual([
        ["configurator", "kit-orders", { value: 41, previous: null }],
      ]);
      const actions = (await t.database.db.select().from(auditLog)).map((e) => e.action);
      expect(actions.filter((a) => a.startsWith("study-counter."))).toEqual([
        "study-counter.set",
        "study-counter.increment",
        "study-counter.increment",
        "study-counter.remove",
      ]);
    });

    it("400 naming value or scope, 404 for a counter not there, 401/403; nothing written", async () => {
      const before = await auditCount();
      for (const value of [1.5, "7", true]) {
        const res = await replay("saveStudyCounter", { params: { scope: "kit-orders" }, body: { value } });
        expect(res.status, String(value)).toBe(400);
        expect(res.body.error).toMatch(/value/);
      }
      const blank = await replay("saveStudyCounter", { params: { scope: "%20" }, body: { value: 1 } });
      expect(blank.status).toBe(400);
      expect(blank.body.error).toMatch(/^scope: must not be blank/);
      expect((await replay("incrementStudyCounter", { params: { scope: "%20" } })).status).toBe(400);
      const missing = await replay("deleteStudyCounter", { params: { scope: "nope" } });
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ error: 'study counter "nope" not found in study "flu-watch"' });

      const reader = await researcher(t, studyKey, "read-study-config");
      expect((await replay("getStudyCounters", { token: reader.token })).status).toBe(200);
      for (const func of ["incrementStudyCounter", "deleteStudyCounter"]) {
        expect((await replay(func, { token: reader.token, params: { scope: "kit-orders" } })).status, func).toBe(403);
        expect((await replay(func, { token: "", params: { scope: "kit-orders" } })).status, func).toBe(401);
      }
      const other = await researcher(t, "diet-study", "manage-study-counters");
      expect(
        (await replay("saveStudyCounter", { token: other.token, params: { scope: "kit-orders" }, body: { value: 0 } }))
          .status,
      ).toBe(403);
      expect((await replay("getStudyCounters", { token: admin, params: { studyKey: "nope" } })).status).toBe(404);
      expect(await counters()).toEqual([{ scope: "kit-orders", value: 42 }]);
      expect(await auditCount()).toBe(before);
    });
  });

  describe("study variables", () => {
    it("creates, lists, reads, describes, sets the value of and deletes a variable as case-admin does", async () => {
      const created = await replay("createStudyVariable", {
        body: {
          variableDef: {
            key: "kitStock",
            type: "int",
            label: "Kits",
            uiType: "number",
            uiPriority: 1,
            configs: { min: 0 },
          },
        },
      });
      expect(created.failed).toBe(false);
      expect(created.body).toEqual({ id: "kitStock" });

      const listed = await replay("getStudyVariables");
      expect(listed.failed).toBe(false);
      expect(listed.body.variables).toEqual([
        expect.objectContaining({ key: "kitStock", type: "int", value: 0, label: "Kits", configs: { min: 0 } }),
      ]);

      const described = await replay("updateStudyVariableConfigs", {
        params: { variableKey: "kitStock" },
        body: { variableDef: { type: "int", label: "Kits in stock", description: "left", uiPriority: 3 } },
      });
      expect(described.failed).toBe(false);
      const valued = await replay("updateStudyVariableValue", {
        params: { variableKey: "kitStock" },
        body: { variable: { value: 250, type: "int" } },
      });
      expect(valued.failed).toBe(false);

      const read = await replay("getStudyVariable", { params: { variableKey: "kitStock" } });
      expect(read.failed).toBe(false);
      expect(read.body.variable).toMatchObject({
        studyKey,
        key: "kitStock",
        type: "int",
        value: 250,
        label: "Kits in stock",
        description: "left",
        uiPriority: 3,
      });
      for (const field of ["createdAt", "configUpdatedAt", "valueUpdatedAt"]) {
        expect(new Date(read.body.variable[field]).toISOString(), field).toBe(read.body.variable[field]);
      }

      const deleted = await replay("deleteStudyVariable", { params: { variableKey: "kitStock" } });
      expect(deleted.failed).toBe(false);
      expect(deleted.body).toEqual({ success: true });
      expect((await replay("getStudyVariable", { params: { variableKey: "kitStock" } })).failed).toBe(true);
      const actions = (await t.database.db.select().from(auditLog).where(eq(auditLog.target, "kitStock"))).map(
        (e) => e.action,
      );
      expect(actions).toEqual(["variable.define", "variable.describe", "variable.set", "variable.delete"]);
    });

    it("case-insensitive keys as case-backend binds them; a date shown as RFC 3339", async () => {
      const res = await replay("createStudyVariable", {
        rawBody: JSON.stringify({ VariableDef: { Key: "launch", TYPE: "date", Value: "2026-11-01T09:00:00Z" } }),
      });
      expect(res.status).toBe(200);
      const [row] = await t.database.db
        .select({ value: studyVariables.value })
        .from(studyVariables)
        .where(and(eq(studyVariables.studyKey, studyKey), eq(studyVariables.key, "launch")));
      expect(row?.value).toBe(1_793_523_600);
      const read = await replay("getStudyVariable", { params: { variableKey: "launch" } });
      expect(read.body.variable.value).toBe("2026-11-01T09:00:00Z");
    });

    it("400 naming the field, 409 for a key in use, 403 for a reader's writes; nothing written", async () => {
      const before = await auditCount();
      const dup = await replay("createStudyVariable", { body: { variableDef: { key: "launch", type: "int" } } });
      expect(dup.status).toBe(409);
      const wrong = await replay("updateStudyVariableValue", {
        params: { variableKey: "launch" },
        body: { variable: { value: "soon", type: "date" } },
      });
      expect(wrong.status).toBe(400);
      expect(wrong.body.error).toMatch(/^variable\.value: a date variable takes/);
      const noDef = await replay("updateStudyVariableConfigs", { params: { variableKey: "launch" }, body: {} });
      expect(noDef.status).toBe(400);
      expect(noDef.body.error).toMatch(/variableDef/);
      const reader = await researcher(t, studyKey, "read-study-config");
      expect((await replay("getStudyVariables", { token: reader.token })).status).toBe(200);
      const denied = await replay("deleteStudyVariable", { token: reader.token, params: { variableKey: "launch" } });
      expect(denied.status).toBe(403);
      expect((await replay("getStudyVariables", { token: "" })).status).toBe(401);
      expect(await auditCount()).toBe(before);
    });
  });
});
