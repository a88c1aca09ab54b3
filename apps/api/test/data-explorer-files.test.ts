import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { permissions, type PermissionAction } from "@studyflow/db";
import { systemClock } from "@studyflow/domain/foundation";
import { setParticipantFileUploadRule } from "@studyflow/domain/participant-files";
import {
  bearer,
  call,
  exp,
  insertParticipant,
  managementToken,
  participantIdOf,
  participantUser,
  researcher,
  num,
  setupStudy,
  str,
} from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

const BASE = "/v1/studies/photos/data-explorer/files";

const JPEG = (size: number, fill = 0x41) => {
  const bytes = Buffer.alloc(size, fill);
  bytes.set([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46]);
  return bytes;
};
const PNG = (size: number) => {
  const bytes = Buffer.alloc(size, 0x42);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return bytes;
};

interface FileInfo {
  id: string;
  participantID: string;
  fileType: string;
  size: number;
  [key: string]: unknown;
}
interface FilePage {
  fileInfos: FileInfo[];
  pagination: { totalCount: number; currentPage: number; totalPages: number; pageSize: number };
}

describe("data explorer: participant files", () => {
  let t: TestApp;
  let admin: string;
  let photos: Awaited<ReturnType<typeof setupStudy>>;
  let other: Awaited<ReturnType<typeof setupStudy>>;

  beforeAll(async () => {
    t = await createTestApp({ env: { PARTICIPANT_FILE_MAX_BYTES: String(64 * 1024) } });
    photos = await setupStudy(t, { key: "photos" });
    other = await setupStudy(t, { key: "other" });
    const rule = call("lte", exp(call("getEventPayloadValueAsNum", str("fileSize"))), num(64 * 1024));
    for (const key of ["photos", "other"]) {
      await setParticipantFileUploadRule(t.database.db, key, rule, "test", { clock: systemClock });
    }
    admin = await managementToken(t, "root", true);
    await t.settle();
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A researcher holding one action on "photos", by studyflow's or case-backend's name. */
  async function holder(action: PermissionAction) {
    const subject = `researcher-${Math.random().toString(36).slice(2, 10)}`;
    await t.database.db.insert(permissions).values({ subjectId: subject, studyKey: "photos", action });
    await t.settle();
    return { token: await managementToken(t, subject) };
  }

  /** A participant of `study` who uploads `bytes` through the participant-data route. */
  async function uploadAs(study: { key: string; secret: string }, bytes: Uint8Array, type = "image/jpeg") {
    const user = await participantUser(t);
    const profileId = user.profiles[0]!.id;
    const participantId = participantIdOf(study, profileId);
    await insertParticipant(t.database.db, { studyKey: study.key, participantId });
    const form = new FormData();
    form.append("profileID", profileId);
    form.append("file", new Blob([bytes], { type }), "photo");
    const res = await t.app.request(`/v1/study-service/participant-data/${study.key}/files`, {
      method: "POST",
      body: form,
      headers: bearer(user.token),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const { fileInfo } = (await res.json()) as { fileInfo: { id: string } };
    return { id: fileInfo.id, participantId };
  }

  const get = (path: string, token: string | null = admin, method = "GET") =>
    t.app.request(path, { method, headers: token ? bearer(token) : {} });
  const page = async (query = "", token = admin) => {
    const res = await get(`${BASE}${query}`, token);
    expect(res.status, await res.clone().text()).toBe(200);
    return (await res.json()) as FilePage;
  };

  it("lists, filters, downloads and deletes the files participants uploaded", async () => {
    const first = await uploadAs(photos, JPEG(1_000));
    const second = await uploadAs(photos, PNG(2_000), "image/png");
    const third = await uploadAs(photos, JPEG(3_000, 0x43));
    const foreign = await uploadAs(other, JPEG(500));

    const all = await page();
    expect(all.pagination).toEqual({ totalCount: 3, currentPage: 1, totalPages: 1, pageSize: 10 });
    expect(all.fileInfos.map((file) => file.id).sort()).toEqual([first.id, second.id, third.id].sort());
    expect(all.fileInfos.find((file) => file.id === second.id)).toEqual({
      id: second.id,
      participantID: second.participantId,
      status: "ready",
      path: `${t.config.INSTANCE_ID}/photos/${second.id}.png`,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      submittedAt: expect.any(Number),
      fileType: "image/png",
      visibleToParticipant: true,
      size: 2_000,
    });
    expect((await page("/")).pagination.totalCount).toBe(3);

    // pages of two: newest first, as case-backend sorts
    const p1 = await page("?page=1&limit=2");
    const p2 = await page("?page=2&limit=2");
    expect(p1.pagination).toEqual({ totalCount: 3, currentPage: 1, totalPages: 2, pageSize: 2 });
    expect(p2.pagination).toEqual({ totalCount: 3, currentPage: 2, totalPages: 2, pageSize: 2 });
    expect(p1.fileInfos).toHaveLength(2);
    expect(p2.fileInfos).toHaveLength(1);
    expect([...p1.fileInfos, ...p2.fileInfos].map((file) => file.id)).toEqual(all.fileInfos.map((file) => file.id));

    // case-admin's filter: {"participantID": …}, URL-encoded JSON
    const filter = (value: unknown) => `?filter=${encodeURIComponent(JSON.stringify(value))}`;
    const mine = await page(filter({ participantID: first.participantId }));
    expect(mine.fileInfos.map((file) => file.id)).toEqual([first.id]);
    expect(mine.pagination.totalCount).toBe(1);
    expect((await page(filter({ participantID: foreign.participantId }))).fileInfos).toEqual([]);
    expect((await page(filter({ fileType: "image/png" }))).fileInfos.map((file) => file.id)).toEqual([second.id]);
    const bad = await get(`${BASE}${filter({ uploadedBy: "x" })}`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/uploadedBy/);
    expect((await get(`${BASE}?filter=not-json`)).status).toBe(400);

    // the download: the same bytes and type, as an attachment named as case-backend names it
    const download = await get(`${BASE}/${third.id}`);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-type")).toBe("image/jpeg");
    expect(download.headers.get("content-disposition")).toBe(`attachment; filename=${third.id}.jpg`);
    expect(Buffer.from(await download.arrayBuffer()).equals(JPEG(3_000, 0x43))).toBe(true);
    const png = await get(`${BASE}/${second.id}/`);
    expect(png.status).toBe(200);
    expect(png.headers.get("content-type")).toBe("image/png");
    expect(Buffer.from(await png.arrayBuffer()).equals(PNG(2_000))).toBe(true);

    // another study's file, an unknown id, an unknown study: not found
    expect((await get(`${BASE}/${foreign.id}`)).status).toBe(404);
    expect((await get(`${BASE}/${foreign.id}`, admin, "DELETE")).status).toBe(404);
    expect((await get(`${BASE}/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
    expect((await get(`${BASE}/abc`)).status).toBe(404);
    expect((await get(`/v1/studies/no-such-study/data-explorer/files`)).status).toBe(404);
    expect((await get(`/v1/studies/no-such-study/data-explorer/files/${first.id}`)).status).toBe(404);
    expect((await get(`/v1/studies/no-such-study/data-explorer/files/${first.id}`, admin, "DELETE")).status).toBe(404);

    // delete: answered as case-backend answers, then gone from the list and the download
    const deleted = await get(`${BASE}/${third.id}`, admin, "DELETE");
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ message: "study file deleted" });
    expect((await get(`${BASE}/${third.id}`)).status).toBe(404);
    expect((await get(`${BASE}/${third.id}`, admin, "DELETE")).status).toBe(404);
    expect((await page()).fileInfos.map((file) => file.id).sort()).toEqual([first.id, second.id].sort());
    // the other study's file is untouched
    const otherList = (await (await get(`/v1/studies/other/data-explorer/files`)).json()) as FilePage;
    expect(otherList.fileInfos.map((file) => file.id)).toEqual([foreign.id]);
  });

  it("401 without a token, 403 without the permission; CASE's and studyflow's names both open them", async () => {
    const { id } = await uploadAs(photos, JPEG(800));
    for (const [path, method] of [
      [BASE, "GET"],
      [`${BASE}/${id}`, "GET"],
      [`${BASE}/${id}`, "DELETE"],
    ] as const) {
      expect((await get(path, null, method)).status, `${method} ${path}`).toBe(401);
    }

    const responsesOnly = await researcher(t, "photos", "get-responses");
    expect((await get(BASE, responsesOnly.token)).status).toBe(403);
    expect((await get(`${BASE}/${id}`, responsesOnly.token)).status).toBe(403);
    expect((await get(`${BASE}/${id}`, responsesOnly.token, "DELETE")).status).toBe(403);

    for (const action of ["get-files", "get-participant-states"] as const) {
      const reader = await holder(action);
      expect((await get(BASE, reader.token)).status, action).toBe(200);
      expect((await get(`${BASE}/${id}`, reader.token)).status, action).toBe(200);
      expect((await get(`${BASE}/${id}`, reader.token, "DELETE")).status, action).toBe(403);
      // a grant on one study opens nothing of another
      expect((await get(`/v1/studies/other/data-explorer/files`, reader.token)).status, action).toBe(403);
    }
    const caseDeleter = await holder("delete-files");
    expect((await get(BASE, caseDeleter.token)).status).toBe(403);
    expect((await get(`${BASE}/${id}`, caseDeleter.token, "DELETE")).status).toBe(200);
    const { id: second } = await uploadAs(photos, JPEG(900));
    const editor = await holder("edit-participant-data");
    expect((await get(`${BASE}/${second}`, editor.token, "DELETE")).status).toBe(200);
  });
});
