import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { participantFiles, storedFileParts, storedFiles, studies } from "@studyflow/db";
import { removeExpiredExportFiles } from "@studyflow/domain/exports";
import { createPostgresFileStore } from "@studyflow/domain/files";
import { systemClock } from "@studyflow/domain/foundation";
import { setParticipantFileUploadRule } from "@studyflow/domain/participant-files";
import {
  bearer,
  call,
  exp,
  insertParticipant,
  num,
  participantIdOf,
  participantUser,
  setupStudy,
  str,
} from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

/** Small limits, so that every case fits under the app's general 2 MiB body limit. */
const MAX_BYTES = 64 * 1024;
/** The study's own rule allows less than the deployment: files up to 40 000 bytes. */
const RULE_MAX = 40_000;

const JPEG = (size: number) => {
  const bytes = Buffer.alloc(size, 0x41);
  bytes.set([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46]);
  return bytes;
};
const PNG = (size: number) => {
  const bytes = Buffer.alloc(size, 0x42);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return bytes;
};
const GIF = Buffer.from("GIF89a-not-allowed-here");

const files = (study: string, rest = "") => `/v1/study-service/participant-data/${study}/files${rest}`;

describe("participant files", () => {
  let t: TestApp;
  let ticks: Awaited<ReturnType<typeof setupStudy>>;
  let closed: Awaited<ReturnType<typeof setupStudy>>;
  let paused: Awaited<ReturnType<typeof setupStudy>>;

  beforeAll(async () => {
    t = await createTestApp({ env: { PARTICIPANT_FILE_MAX_BYTES: String(MAX_BYTES) } });
    ticks = await setupStudy(t, { key: "ticks" });
    closed = await setupStudy(t, { key: "closed" });
    paused = await setupStudy(t, { key: "paused", status: "inactive" });
    const rule = call("lte", exp(call("getEventPayloadValueAsNum", str("fileSize"))), num(RULE_MAX));
    await setParticipantFileUploadRule(t.database.db, "ticks", rule, "test", { clock: systemClock });
    await setParticipantFileUploadRule(t.database.db, "paused", rule, "test", { clock: systemClock });
    await t.settle();
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A user whose main profile is a participant of the given studies. */
  async function enrolled(...studies: { key: string; secret: string }[]) {
    const user = await participantUser(t);
    const profile = user.profiles[0]!;
    for (const study of studies) {
      await insertParticipant(t.database.db, {
        studyKey: study.key,
        participantId: participantIdOf(study, profile.id),
      });
    }
    return { token: user.token, profileId: profile.id };
  }

  function upload(
    study: string,
    token: string | undefined,
    fields: { profileID?: string; file?: { bytes: Uint8Array; name?: string; type?: string } },
  ) {
    const form = new FormData();
    if (fields.profileID !== undefined) form.append("profileID", fields.profileID);
    if (fields.file) {
      form.append(
        "file",
        new Blob([fields.file.bytes], { type: fields.file.type ?? "image/jpeg" }),
        fields.file.name ?? "photo.jpg",
      );
    }
    return t.app.request(files(study), { method: "POST", body: form, headers: token ? bearer(token) : {} });
  }

  const get = (path: string, token?: string, method = "GET") =>
    t.app.request(path, { method, headers: token ? bearer(token) : {} });

  async function uploaded(study: string, who: { token: string; profileId: string }, bytes: Uint8Array) {
    const res = await upload(study, who.token, { profileID: who.profileId, file: { bytes } });
    expect(res.status, await res.clone().text()).toBe(200);
    return ((await res.json()) as { fileInfo: { id: string; path: string; status: string } }).fileInfo;
  }

  it("uploads, lists, downloads and deletes a participant's file", async () => {
    const who = await enrolled(ticks);
    const bytes = JPEG(30_000);
    const res = await upload("ticks", who.token, { profileID: who.profileId, file: { bytes } });
    expect(res.status).toBe(200);
    const { fileInfo } = (await res.json()) as { fileInfo: { id: string; path: string; status: string } };
    expect(fileInfo).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      path: `${t.config.INSTANCE_ID}/ticks/${fileInfo.id}.jpg`,
      status: "ready",
      createdAt: expect.any(String),
      fileType: "image/jpeg",
      visibleToParticipant: true,
      size: 30_000,
    });

    // one participant_files row with its stored file, bytes and all, kept until deleted
    const [row] = await t.database.db.select().from(participantFiles).where(eq(participantFiles.id, fileInfo.id));
    expect(row).toMatchObject({
      studyKey: "ticks",
      participantId: participantIdOf(ticks, who.profileId),
      fileType: "image/jpeg",
      size: 30_000,
      status: "ready",
    });
    const [stored] = await t.database.db.select().from(storedFiles).where(eq(storedFiles.id, row!.storedFileId!));
    expect(stored).toMatchObject({ complete: true, size: 30_000, contentType: "image/jpeg", taskId: null });

    const list = await get(`${files("ticks")}?pid=${who.profileId}`, who.token);
    expect(list.status).toBe(200);
    const listed = (await list.json()) as { fileInfos: { id: string }[]; pagination: unknown };
    expect(listed.fileInfos.map((file) => file.id)).toEqual([fileInfo.id]);
    expect(listed.pagination).toEqual({ totalCount: 1, currentPage: 1, totalPages: 1, pageSize: 10 });

    const download = await get(files("ticks", `/${fileInfo.id}?pid=${who.profileId}`), who.token);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-type")).toBe("image/jpeg");
    expect(download.headers.get("content-disposition")).toBe(`attachment; filename=${fileInfo.id}.jpg`);
    expect(download.headers.get("x-content-type-options")).toBe("nosniff");
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);

    const removed = await get(files("ticks", `/${fileInfo.id}?pid=${who.profileId}`), who.token, "DELETE");
    expect(removed.status).toBe(200);
    expect(await removed.json()).toEqual({ message: "file deleted successfully" });
    expect(await t.database.db.select().from(participantFiles).where(eq(participantFiles.id, fileInfo.id))).toEqual([]);
    expect(await t.database.db.select().from(storedFiles).where(eq(storedFiles.id, stored!.id))).toEqual([]);
    expect(await t.database.db.select().from(storedFileParts).where(eq(storedFileParts.fileId, stored!.id))).toEqual(
      [],
    );

    expect((await get(files("ticks", `/${fileInfo.id}?pid=${who.profileId}`), who.token)).status).toBe(404);
    expect((await get(files("ticks", `/${fileInfo.id}?pid=${who.profileId}`), who.token, "DELETE")).status).toBe(404);
    const after = (await (await get(`${files("ticks")}?pid=${who.profileId}`, who.token)).json()) as {
      fileInfos: unknown[];
    };
    expect(after.fileInfos).toEqual([]);
  });

  it("reads the type from the bytes: a PNG sent as photo.jpg/image/jpeg is stored as image/png", async () => {
    const who = await enrolled(ticks);
    const res = await upload("ticks", who.token, {
      profileID: who.profileId,
      file: { bytes: PNG(2_000), name: "photo.jpg", type: "image/jpeg" },
    });
    expect(res.status).toBe(200);
    const { fileInfo } = (await res.json()) as { fileInfo: { id: string; path: string; fileType: string } };
    expect(fileInfo.fileType).toBe("image/png");
    expect(fileInfo.path).toMatch(/\.png$/);
    const download = await get(files("ticks", `/${fileInfo.id}?pid=${who.profileId}`), who.token);
    expect(download.headers.get("content-type")).toBe("image/png");
  });

  it("refuses a file whose bytes are no allowed type, whatever it claims (400 naming file)", async () => {
    const who = await enrolled(ticks);
    const lying = await upload("ticks", who.token, {
      profileID: who.profileId,
      file: { bytes: Buffer.from("<html><script>alert(1)</script></html>"), name: "photo.jpg", type: "image/jpeg" },
    });
    expect(lying.status).toBe(400);
    expect(((await lying.json()) as { error: string }).error).toMatch(
      /^file: its content is of no known type; allowed are image\/jpeg, image\/png/,
    );

    const gif = await upload("ticks", who.token, { profileID: who.profileId, file: { bytes: GIF, type: "image/gif" } });
    expect(gif.status).toBe(400);
    expect(((await gif.json()) as { error: string }).error).toMatch(/^file: its content is image\/gif/);

    const empty = await upload("ticks", who.token, { profileID: who.profileId, file: { bytes: new Uint8Array(0) } });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toEqual({ error: "file: is empty" });
    expect(await t.database.db.select().from(participantFiles).where(eq(participantFiles.studyKey, "closed"))).toEqual(
      [],
    );
  });

  it("refuses a file larger than PARTICIPANT_FILE_MAX_BYTES with 413, and a body far beyond it before reading it", async () => {
    const who = await enrolled(ticks);
    const over = await upload("ticks", who.token, { profileID: who.profileId, file: { bytes: JPEG(MAX_BYTES + 1) } });
    expect(over.status).toBe(413);
    // refused as the file passes the limit, before its end: its size is not known, only that it is over
    expect(await over.json()).toEqual({ error: `file: the upload is larger than the ${MAX_BYTES} bytes allowed` });

    const far = await upload("ticks", who.token, { profileID: who.profileId, file: { bytes: JPEG(MAX_BYTES * 3) } });
    expect(far.status).toBe(413);
    expect(((await far.json()) as { error: string }).error).toMatch(/^file: the upload is larger than/);
  });

  it("names a missing profileID or file (400)", async () => {
    const who = await enrolled(ticks);
    const noProfile = await upload("ticks", who.token, { file: { bytes: JPEG(100) } });
    expect(noProfile.status).toBe(400);
    expect(((await noProfile.json()) as { error: string }).error).toMatch(/profileID/);
    const noFile = await upload("ticks", who.token, { profileID: who.profileId });
    expect(noFile.status).toBe(400);
    expect(((await noFile.json()) as { error: string }).error).toMatch(/form\.file: file is required/);
    const json = await t.app.request(files("ticks"), {
      method: "POST",
      headers: { ...bearer(who.token), "Content-Type": "application/json" },
      body: JSON.stringify({ profileID: who.profileId }),
    });
    // a JSON body is no upload: the route takes only a multipart form
    expect(json.status).toBe(415);
    expect(await json.json()).toEqual({ error: expect.any(String) });
    const noPid = await get(files("ticks"), who.token);
    expect(noPid.status).toBe(400);
    expect(((await noPid.json()) as { error: string }).error).toMatch(/^query\.pid: /);
  });

  it("applies the study's upload rule, its status and the profile's participation", async () => {
    const who = await enrolled(ticks, closed, paused);
    // the study's rule allows at most RULE_MAX bytes, less than the deployment's limit
    const big = await upload("ticks", who.token, { profileID: who.profileId, file: { bytes: JPEG(RULE_MAX + 1) } });
    expect(big.status).toBe(403);
    expect(await big.json()).toEqual({
      error: "file upload not allowed: the study's upload rule does not allow this file",
    });
    // no rule: no uploads, as in case-backend
    const noRule = await upload("closed", who.token, { profileID: who.profileId, file: { bytes: JPEG(100) } });
    expect(noRule.status).toBe(403);
    expect(((await noRule.json()) as { error: string }).error).toMatch(/does not accept participant files/);
    const inactive = await upload("paused", who.token, { profileID: who.profileId, file: { bytes: JPEG(100) } });
    expect(inactive.status).toBe(409);
    const unknown = await upload("nope", who.token, { profileID: who.profileId, file: { bytes: JPEG(100) } });
    expect(unknown.status).toBe(404);

    const stranger = await participantUser(t);
    const notParticipant = await upload("ticks", stranger.token, {
      profileID: stranger.profiles[0]!.id,
      file: { bytes: JPEG(100) },
    });
    expect(notParticipant.status).toBe(404);
    // a profile that is no participant has no files (as in case-backend), not an error
    const list = await get(`${files("ticks")}?pid=${stranger.profiles[0]!.id}`, stranger.token);
    expect(list.status).toBe(200);
    expect(((await list.json()) as { fileInfos: unknown[] }).fileInfos).toEqual([]);
  });

  it("keeps every user to their own files: no token, another's profile, another's file id", async () => {
    const owner = await enrolled(ticks);
    const other = await enrolled(ticks);
    const file = await uploaded("ticks", owner, JPEG(500));

    expect((await upload("ticks", undefined, { profileID: owner.profileId, file: { bytes: JPEG(100) } })).status).toBe(
      401,
    );
    expect((await get(`${files("ticks")}?pid=${owner.profileId}`)).status).toBe(401);
    expect((await get(files("ticks", `/${file.id}?pid=${owner.profileId}`))).status).toBe(401);
    expect((await get(files("ticks", `/${file.id}?pid=${owner.profileId}`), undefined, "DELETE")).status).toBe(401);

    // the owner's profile with another user's token
    expect(
      (await upload("ticks", other.token, { profileID: owner.profileId, file: { bytes: JPEG(100) } })).status,
    ).toBe(403);
    expect((await get(`${files("ticks")}?pid=${owner.profileId}`, other.token)).status).toBe(403);
    expect((await get(files("ticks", `/${file.id}?pid=${owner.profileId}`), other.token)).status).toBe(403);
    expect((await get(files("ticks", `/${file.id}?pid=${owner.profileId}`), other.token, "DELETE")).status).toBe(403);

    // the owner's file id with the other user's own profile: not found, and nothing deleted
    const foreignGet = await get(files("ticks", `/${file.id}?pid=${other.profileId}`), other.token);
    expect(foreignGet.status).toBe(404);
    expect((await get(files("ticks", `/${file.id}?pid=${other.profileId}`), other.token, "DELETE")).status).toBe(404);
    expect(
      ((await (await get(`${files("ticks")}?pid=${other.profileId}`, other.token)).json()) as { fileInfos: unknown[] })
        .fileInfos,
    ).toEqual([]);
    expect((await get(files("ticks", `/${file.id}?pid=${owner.profileId}`), owner.token)).status).toBe(200);
    // an id that is no uuid names nothing
    expect((await get(files("ticks", `/not-a-file?pid=${owner.profileId}`), owner.token)).status).toBe(404);
  });

  it("pages the list newest first, as CASE counts pages", async () => {
    const who = await enrolled(ticks);
    const ids = [];
    for (const size of [100, 200, 300]) {
      t.setNow(Date.UTC(2026, 0, 1) + size * 1000);
      ids.push((await uploaded("ticks", who, JPEG(size))).id);
    }
    t.setNow(Date.now());
    const page2 = (await (await get(`${files("ticks")}?pid=${who.profileId}&page=2&limit=2`, who.token)).json()) as {
      fileInfos: { id: string; size: number }[];
      pagination: unknown;
    };
    expect(page2.fileInfos.map((file) => file.size)).toEqual([100]);
    expect(page2.pagination).toEqual({ totalCount: 3, currentPage: 2, totalPages: 2, pageSize: 2 });
    const bad = await get(`${files("ticks")}?pid=${who.profileId}&page=x`, who.token);
    expect(bad.status).toBe(400);
  });

  it("is not removed by the export files' retention", async () => {
    const who = await enrolled(ticks);
    const file = await uploaded("ticks", who, JPEG(100));
    const removed = await removeExpiredExportFiles(t.database.db, createPostgresFileStore(t.database.db), {
      taskExportDays: 1,
      dailyExportDays: 1,
      now: Date.now() + 400 * 86_400_000,
    });
    expect(removed).toBe(0);
    expect((await get(files("ticks", `/${file.id}?pid=${who.profileId}`), who.token)).status).toBe(200);
  });
});

describe("participant files in the filesystem store", () => {
  let t: TestApp;
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(path.join(tmpdir(), "participant-files-"));
    t = await createTestApp({ env: { EXPORT_FILE_STORE: "filesystem", RESULT_DIR: directory } });
    await setupStudy(t, { key: "ticks" });
    await setParticipantFileUploadRule(t.database.db, "ticks", { name: "gt", data: [num(1), num(0)] }, "test", {
      clock: systemClock,
    });
    await t.settle();
  });
  afterAll(async () => {
    await t?.close();
    await rm(directory, { recursive: true, force: true });
  });

  it("stores the bytes under RESULT_DIR, serves them and removes them with the file", async () => {
    const user = await participantUser(t);
    const profileId = user.profiles[0]!.id;
    const [study] = await t.database.db.select().from(studies).where(eq(studies.key, "ticks"));
    await insertParticipant(t.database.db, { studyKey: "ticks", participantId: participantIdOf(study!, profileId) });
    const form = new FormData();
    form.append("profileID", profileId);
    const bytes = JPEG(5_000);
    form.append("file", new Blob([bytes]), "bite.jpg");
    const res = await t.app.request(files("ticks"), { method: "POST", body: form, headers: bearer(user.token) });
    expect(res.status).toBe(200);
    const { fileInfo } = (await res.json()) as { fileInfo: { id: string } };
    const [row] = await t.database.db.select().from(participantFiles).where(eq(participantFiles.id, fileInfo.id));
    const folder = path.join(directory, "files", row!.storedFileId!);
    expect((await readdir(folder)).length).toBe(1);

    const download = await t.app.request(files("ticks", `/${fileInfo.id}?pid=${profileId}`), {
      headers: bearer(user.token),
    });
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
    const removed = await t.app.request(files("ticks", `/${fileInfo.id}?pid=${profileId}`), {
      method: "DELETE",
      headers: bearer(user.token),
    });
    expect(removed.status).toBe(200);
    await expect(readdir(folder)).rejects.toThrow(/ENOENT/);
  });
});
