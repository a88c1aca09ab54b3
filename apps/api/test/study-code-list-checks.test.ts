import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addStudyCodes } from "@studyflow/domain/study-config";
import { setupStudy } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

let addressCounter = 0;
/** A client address of its own per call site, so the per-address limit of one test leaves the others alone. */
function freshAddress(): string {
  addressCounter += 1;
  return `198.51.${Math.floor(addressCounter / 250)}.${addressCounter % 250}`;
}

describe("a study's code lists, checked by participant apps (CASE's has-code and available-count)", () => {
  let t: TestApp;
  const base = "/v1/study-service/studies";

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "codes-study" });
    await addStudyCodes(t.database.db, "codes-study", "invites", ["A7K2-93QX", "B8L3-04RY", "C9M4-15SZ"], "test");
    await addStudyCodes(t.database.db, "codes-study", "other", ["ZZ-1"], "test");
  });
  afterAll(async () => {
    await t.close();
  });

  const get = (path: string, address = freshAddress()) =>
    t.app.request(path, { headers: { "x-forwarded-for": `10.0.0.1, ${address}` } });

  describe("GET …/code-lists/has-code", () => {
    it("says whether the list holds the code, without a token", async () => {
      const address = freshAddress();
      const held = await get(
        `${base}/codes-study/code-lists/has-code?listKey=invites&code=A7K2-93QX&instanceID=${t.config.INSTANCE_ID}`,
        address,
      );
      expect(held.status).toBe(200);
      expect(await held.json()).toEqual({ exists: true });
      for (const query of ["listKey=invites&code=nope", "listKey=other&code=A7K2-93QX", "listKey=none&code=ZZ-1"]) {
        const res = await get(`${base}/codes-study/code-lists/has-code?${query}`, address);
        expect(res.status, query).toBe(200);
        expect(await res.json(), query).toEqual({ exists: false });
      }
      // codes are matched exactly, as stored
      const caseOff = await get(`${base}/codes-study/code-lists/has-code?listKey=invites&code=a7k2-93qx`, address);
      expect(await caseOff.json()).toEqual({ exists: false });
    });

    it("refuses a missing code or listKey and another instance with 400, an unknown study with 404", async () => {
      for (const query of ["listKey=invites", "code=A7K2-93QX", "listKey=&code=x", "listKey=invites&code="]) {
        const res = await get(`${base}/codes-study/code-lists/has-code?${query}`);
        expect(res.status, query).toBe(400);
        expect(await res.json(), query).toHaveProperty("error");
      }
      const instance = await get(`${base}/codes-study/code-lists/has-code?listKey=invites&code=x&instanceID=elsewhere`);
      expect(instance.status).toBe(400);
      const unknown = await get(`${base}/no-such-study/code-lists/has-code?listKey=invites&code=A7K2-93QX`);
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toHaveProperty("error");
    });

    it("bounds the checks per address: the 61st in 15 minutes is 429 with Retry-After", async () => {
      const address = freshAddress();
      for (let i = 0; i < 60; i += 1) {
        const res = await get(`${base}/codes-study/code-lists/has-code?listKey=invites&code=guess-${i}`, address);
        expect(res.status).toBe(200);
      }
      const refused = await get(`${base}/codes-study/code-lists/has-code?listKey=invites&code=A7K2-93QX`, address);
      expect(refused.status).toBe(429);
      expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(await refused.json()).toHaveProperty("error");
      // another address is not held back
      const other = await get(`${base}/codes-study/code-lists/has-code?listKey=invites&code=A7K2-93QX`);
      expect(await other.json()).toEqual({ exists: true });
    });
  });

  describe("GET …/code-lists/available-count", () => {
    it("counts the codes of the list, 0 for a list without codes, without a token", async () => {
      const res = await get(
        `${base}/codes-study/code-lists/available-count?listKey=invites&instanceID=${t.config.INSTANCE_ID}`,
      );
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ availableCount: 3 });
      const empty = await get(`${base}/codes-study/code-lists/available-count?listKey=none`);
      expect(await empty.json()).toEqual({ availableCount: 0 });
    });

    it("refuses a missing listKey and another instance with 400, an unknown study with 404", async () => {
      for (const path of [
        `${base}/codes-study/code-lists/available-count`,
        `${base}/codes-study/code-lists/available-count?listKey=`,
        `${base}/codes-study/code-lists/available-count?listKey=invites&instanceID=elsewhere`,
      ]) {
        const res = await get(path);
        expect(res.status, path).toBe(400);
        expect(await res.json(), path).toHaveProperty("error");
      }
      const unknown = await get(`${base}/no-such-study/code-lists/available-count?listKey=invites`);
      expect(unknown.status).toBe(404);
    });
  });
});
