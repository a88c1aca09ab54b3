import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { count, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { participantFiles, storedFileParts, storedFiles } from "@studyflow/db";
import { systemClock } from "@studyflow/domain/foundation";
import { UPLOAD_PART_BYTES, setParticipantFileUploadRule } from "@studyflow/domain/participant-files";
import { UPLOAD_FORM_OVERHEAD_BYTES } from "../src/routes/study-service/participant-data/files";
import { bearer, insertParticipant, num, participantIdOf, participantUser, setupStudy } from "./fixtures";
import { startProbedServer, type ProbedServer } from "./probed-server";
import { createTestApp, type TestApp } from "./test-app";

/*
 * A participant's upload form is parsed as it arrives (busboy over the request's body stream):
 * only the file's bytes are kept, and the first thing over a limit ends the read. Over a real
 * socket, a client that sends a form up to a point and then holds the connection open, neither
 * sending more nor ending the body, gets its answer only from a server that has parsed what came
 * so far; a server that waits for the whole body (as the form parser did before) never answers.
 * The server's side of each connection is watched (socket.bytesRead once its answer is written).
 */

const FILE_MAX_BYTES = 256 * 1024;
const BODY_LIMIT = FILE_MAX_BYTES + UPLOAD_FORM_OVERHEAD_BYTES;
const CHUNK = 64 * 1024;
/** What Node may read from a socket beyond what the API consumed: a few 64 KiB reads. */
const READ_AHEAD = 512 * 1024;

const BOUNDARY = "----studyflow-stream-boundary";
const FORM_TYPE = `multipart/form-data; boundary=${BOUNDARY}`;
const JPEG_START = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46]);

const jpeg = (size: number) => {
  const bytes = Buffer.alloc(size, 0x41);
  JPEG_START.copy(bytes);
  return bytes;
};
const fieldPart = (name: string, value: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const fileHead = (name = "file", filename = "bite.jpg") =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\n` +
  "Content-Type: image/jpeg\r\n\r\n";
const CRLF = Buffer.from("\r\n");
const filePart = (bytes: Buffer, name = "file") => Buffer.concat([Buffer.from(fileHead(name)), bytes, CRLF]);
const CLOSE = `--${BOUNDARY}--\r\n`;
const form = (...parts: (string | Buffer)[]) =>
  Buffer.concat(parts.map((part) => (typeof part === "string" ? Buffer.from(part) : part)));

/** `bytes` in CHUNK-sized pieces, produced as the socket takes them. */
function* pieces(bytes: Buffer): Generator<Buffer> {
  for (let at = 0; at < bytes.length; at += CHUNK) yield bytes.subarray(at, at + CHUNK);
}

/** `total` filler bytes in CHUNK-sized pieces, after `first`, made only as the socket takes them. */
function* stream(first: Buffer, total: number): Generator<Buffer> {
  yield first;
  const filler = Buffer.alloc(CHUNK, 0x41);
  for (let left = total; left > 0; left -= CHUNK) yield left >= CHUNK ? filler : filler.subarray(0, left);
}

describe("participant file uploads are parsed as they arrive", () => {
  let t: TestApp;
  let server: ProbedServer;
  let study: Awaited<ReturnType<typeof setupStudy>>;

  beforeAll(async () => {
    t = await createTestApp({ env: { PARTICIPANT_FILE_MAX_BYTES: String(FILE_MAX_BYTES) } });
    study = await setupStudy(t, { key: "rashes" });
    await setParticipantFileUploadRule(t.database.db, "rashes", { name: "gt", data: [num(1), num(0)] }, "test", {
      clock: systemClock,
    });
    await t.settle();
    server = await startProbedServer(t);
  });
  afterAll(async () => {
    await server?.close();
    await t?.close();
  });

  const uploadPath = "/v1/study-service/participant-data/rashes/files";

  const post = (headers: Record<string, string>, chunks: Iterable<Buffer>, hold = false) =>
    server.post(uploadPath, headers, chunks, hold);

  async function enrolled() {
    const user = await participantUser(t);
    const profileId = user.profiles[0]!.id;
    await insertParticipant(t.database.db, { studyKey: "rashes", participantId: participantIdOf(study, profileId) });
    return { token: user.token, profileId };
  }

  const fileRows = async () => {
    const [files] = await t.database.db.select({ n: count() }).from(participantFiles);
    const [stored] = await t.database.db.select({ n: count() }).from(storedFiles);
    return { files: files!.n, stored: stored!.n };
  };

  const declared = (body: Buffer) => ({ "Content-Type": FORM_TYPE, "Content-Length": String(body.length) });

  it("takes a file of exactly PARTICIPANT_FILE_MAX_BYTES, fields before and after it, and stores its bytes", async () => {
    const who = await enrolled();
    const bytes = jpeg(FILE_MAX_BYTES);
    const body = form(fieldPart("note", "left arm"), filePart(bytes), fieldPart("profileID", who.profileId), CLOSE);
    const answer = await post({ ...bearer(who.token), ...declared(body) }, pieces(body));
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const { fileInfo } = answer.body as { fileInfo: { id: string; size: number; fileType: string } };
    expect(fileInfo).toMatchObject({ size: FILE_MAX_BYTES, fileType: "image/jpeg" });

    const download = await t.app.request(`${uploadPath}/${fileInfo.id}?pid=${who.profileId}`, {
      headers: bearer(who.token),
    });
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it("refuses a file one byte over the limit (413), declared or chunked, and stores nothing", async () => {
    for (const withLength of [true, false]) {
      const who = await enrolled();
      const before = await fileRows();
      const body = form(fieldPart("profileID", who.profileId), filePart(jpeg(FILE_MAX_BYTES + 1)), CLOSE);
      expect(body.length).toBeLessThan(BODY_LIMIT);
      const headers = withLength ? declared(body) : { "Content-Type": FORM_TYPE };
      const answer = await post({ ...bearer(who.token), ...headers }, pieces(body));
      expect(answer.status, `with Content-Length: ${withLength}`).toBe(413);
      expect(answer.body).toEqual({ error: `file: the upload is larger than the ${FILE_MAX_BYTES} bytes allowed` });
      expect(await fileRows()).toEqual(before);
    }
  });

  it("answers a file over the limit with 413 while the body still arrives: a field before it, no Content-Length", async () => {
    const who = await enrolled();
    const before = await fileRows();
    const head = Buffer.from(fieldPart("profileID", who.profileId) + fileHead());
    // the form stops one byte past the limit, in the middle of the file, and is never ended
    const answer = await post(
      { ...bearer(who.token), "Content-Type": FORM_TYPE },
      stream(Buffer.concat([head, JPEG_START]), FILE_MAX_BYTES + 1 - JPEG_START.length),
      true,
    );
    expect(answer.status).toBe(413);
    expect(answer.body).toEqual({ error: `file: the upload is larger than the ${FILE_MAX_BYTES} bytes allowed` });
    // answered from the file's first FILE_MAX_BYTES + 1 bytes, short of the body's bound (BODY_LIMIT)
    expect(answer.serverRead).toBeGreaterThan(FILE_MAX_BYTES);
    expect(await fileRows()).toEqual(before);
  });

  it("answers a file over the limit with 413 before the declared rest of the body arrives", async () => {
    const who = await enrolled();
    const before = await fileRows();
    const whole = form(fieldPart("profileID", who.profileId), filePart(jpeg(FILE_MAX_BYTES + CHUNK / 2)), CLOSE);
    expect(whole.length).toBeLessThan(BODY_LIMIT);
    const upToOver = whole.subarray(0, whole.indexOf(JPEG_START) + FILE_MAX_BYTES + 1);
    const answer = await post({ ...bearer(who.token), ...declared(whole) }, pieces(upToOver), true);
    expect(answer.status).toBe(413);
    expect(answer.serverRead).toBeLessThan(whole.length);
    expect(await fileRows()).toEqual(before);
  });

  it("refuses a flood of small fields or parts (400) as soon as it passes the form's limits", async () => {
    const floods = [
      { what: "fields", part: (i: number) => fieldPart(`f${i}`, "x"), error: /^form: holds more than 8 fields/ },
      {
        what: "parts",
        part: () => `--${BOUNDARY}\r\nX-Nothing: here\r\n\r\nx\r\n`,
        error: /^form: holds more than 9 parts/,
      },
    ];
    for (const flood of floods) {
      const who = await enrolled();
      const before = await fileRows();
      // held: a handful past the limit, then nothing more
      const held = await post(
        { ...bearer(who.token), "Content-Type": FORM_TYPE },
        [form(...Array.from({ length: 12 }, (_, i) => flood.part(i)))],
        true,
      );
      expect(held.status, flood.what).toBe(400);
      expect(held.body, flood.what).toEqual({ error: expect.stringMatching(flood.error) });

      // streamed: a million of them, of which the server reads only the start
      const one = Buffer.from(flood.part(0));
      const many = Buffer.concat(Array.from({ length: Math.floor(CHUNK / one.length) }, () => one));
      const total = 1_000_000 * one.length;
      const answer = await post(
        { ...bearer(who.token), "Content-Type": FORM_TYPE },
        (function* () {
          for (let sent = 0; sent < total; sent += many.length) yield many;
        })(),
      );
      expect(answer.status, flood.what).toBe(400);
      expect(answer.serverRead, flood.what).toBeLessThan(READ_AHEAD);
      expect(answer.sentAtAnswer, flood.what).toBeLessThan(total / 10);
      expect(await fileRows(), flood.what).toEqual(before);
    }
  });

  it("refuses a form that is malformed, cut short or not the upload's shape (400, JSON error), storing nothing", async () => {
    const before = await fileRows();
    const file = filePart(jpeg(1_000));
    const cases: { what: string; type?: string; body: (profileId: string) => Buffer; error: RegExp }[] = [
      {
        what: "no boundary in the Content-Type",
        type: "multipart/form-data",
        body: (p) => form(fieldPart("profileID", p), file, CLOSE),
        error: /^form: the multipart body is malformed/,
      },
      {
        what: "a boundary the body does not use",
        type: "multipart/form-data; boundary=another-boundary",
        body: (p) => form(fieldPart("profileID", p), file, CLOSE),
        error: /^form: the multipart body is malformed/,
      },
      { what: "an empty body", body: () => Buffer.alloc(0), error: /^form: the multipart body is malformed/ },
      {
        what: "a body cut short in the file",
        body: (p) => form(fieldPart("profileID", p), file.subarray(0, 500)),
        error: /^form: the multipart body is malformed/,
      },
      {
        what: "a body without its closing boundary",
        body: (p) => form(fieldPart("profileID", p), file),
        error: /^form: the multipart body is malformed/,
      },
      {
        what: "a part header that is no header",
        body: (p) => form(fieldPart("profileID", p), `--${BOUNDARY}\r\nno colon here\r\n\r\nx\r\n`, file, CLOSE),
        error: /^form: the multipart body is malformed/,
      },
      {
        what: "a part header of 20 KiB",
        body: (p) =>
          form(fieldPart("profileID", p), `--${BOUNDARY}\r\nX-Long: ${"a".repeat(20_480)}\r\n\r\nx\r\n`, file, CLOSE),
        error: /^form: the multipart body is malformed/,
      },
      {
        what: "no file part",
        body: (p) => form(fieldPart("profileID", p), CLOSE),
        error: /^form\.file: file is required/,
      },
      { what: "no profileID", body: () => form(file, CLOSE), error: /^form\.profileID: profileID is required/ },
      {
        what: "two files",
        body: (p) => form(fieldPart("profileID", p), file, file, CLOSE),
        error: /^form: holds more than one file/,
      },
      {
        what: "the file in another part",
        body: (p) => form(fieldPart("profileID", p), filePart(jpeg(1_000), "photo"), CLOSE),
        error: /^form\.photo: is a file/,
      },
      {
        what: "profileID twice",
        body: (p) => form(fieldPart("profileID", p), fieldPart("profileID", p), file, CLOSE),
        error: /^form\.profileID: is given more than once/,
      },
      {
        what: "a field of 2 KiB",
        body: (p) => form(fieldPart("profileID", p), fieldPart("note", "n".repeat(2_048)), file, CLOSE),
        error: /^form\.note: is longer than 1024 bytes/,
      },
    ];
    for (const c of cases) {
      const who = await enrolled();
      const body = c.body(who.profileId);
      for (const withLength of [true, false]) {
        const type = c.type ?? FORM_TYPE;
        const headers: Record<string, string> = withLength
          ? { "Content-Type": type, "Content-Length": String(body.length) }
          : { "Content-Type": type };
        const answer = await post({ ...bearer(who.token), ...headers }, body.length > 0 ? pieces(body) : []);
        const what = `${c.what}, ${withLength ? "with" : "without"} Content-Length`;
        expect(answer.status, what).toBe(400);
        expect(answer.body, what).toEqual({ error: expect.stringMatching(c.error) });
      }
    }
    expect(await fileRows()).toEqual(before);
  });
});

describe("an uploaded file is stored in parts of UPLOAD_PART_BYTES", () => {
  /** Two and a half parts: the store writes three, the last one short. */
  const SIZE = Math.floor(UPLOAD_PART_BYTES * 2.5);

  async function uploadAndRead(t: TestApp) {
    const study = await setupStudy(t, { key: "rashes" });
    await setParticipantFileUploadRule(t.database.db, "rashes", { name: "gt", data: [num(1), num(0)] }, "test", {
      clock: systemClock,
    });
    await t.settle();
    const user = await participantUser(t);
    const profileId = user.profiles[0]!.id;
    await insertParticipant(t.database.db, { studyKey: "rashes", participantId: participantIdOf(study, profileId) });
    const bytes = jpeg(SIZE);
    for (let at = UPLOAD_PART_BYTES; at < SIZE; at += UPLOAD_PART_BYTES) bytes[at] = 0x42; // marks each part's start
    const formData = new FormData();
    formData.append("profileID", profileId);
    formData.append("file", new Blob([bytes], { type: "image/jpeg" }), "bite.jpg");
    const uploadPath = "/v1/study-service/participant-data/rashes/files";
    const res = await t.app.request(uploadPath, { method: "POST", body: formData, headers: bearer(user.token) });
    expect(res.status, await res.clone().text()).toBe(200);
    const { fileInfo } = (await res.json()) as { fileInfo: { id: string; size: number } };
    expect(fileInfo.size).toBe(SIZE);
    const [row] = await t.database.db.select().from(participantFiles).where(eq(participantFiles.id, fileInfo.id));
    const download = await t.app.request(`${uploadPath}/${fileInfo.id}?pid=${profileId}`, {
      headers: bearer(user.token),
    });
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
    return row!.storedFileId!;
  }

  it("in PostgreSQL: three rows, read back whole", async () => {
    const t = await createTestApp({ env: { PARTICIPANT_FILE_MAX_BYTES: String(SIZE) } });
    try {
      const storedFileId = await uploadAndRead(t);
      const parts = await t.database.db
        .select({ seq: storedFileParts.seq, data: storedFileParts.data })
        .from(storedFileParts)
        .where(eq(storedFileParts.fileId, storedFileId))
        .orderBy(storedFileParts.seq);
      expect(parts.map((part) => part.data.length)).toEqual([
        UPLOAD_PART_BYTES,
        UPLOAD_PART_BYTES,
        SIZE - 2 * UPLOAD_PART_BYTES,
      ]);
    } finally {
      await t.close();
    }
  });

  it("in the filesystem store: three part files, read back whole", async () => {
    const directory = await mkdtemp(path.join(tmpdir(), "upload-parts-"));
    const t = await createTestApp({
      env: { PARTICIPANT_FILE_MAX_BYTES: String(SIZE), EXPORT_FILE_STORE: "filesystem", RESULT_DIR: directory },
    });
    try {
      const storedFileId = await uploadAndRead(t);
      expect(await readdir(path.join(directory, "files", storedFileId))).toHaveLength(3);
    } finally {
      await t.close();
      await rm(directory, { recursive: true, force: true });
    }
  });
});
