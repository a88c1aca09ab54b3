import { count, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { participantFiles, storedFiles } from "@studyflow/db";
import { systemClock } from "@studyflow/domain/foundation";
import { setParticipantFileUploadRule } from "@studyflow/domain/participant-files";
import { MAX_BODY_BYTES } from "../src/middleware/body-size";
import { bearer, insertParticipant, num, participantIdOf, participantUser, setupStudy } from "./fixtures";
import { startProbedServer, type ProbedServer } from "./probed-server";
import { createTestApp, type TestApp } from "./test-app";

/*
 * Request bodies over a real socket: every body is bounded before anything reads it. The server's
 * side of each connection is watched (socket.bytesRead when the answer has been written), so a
 * test sees how much of a body the API took in before it answered, not only what it answered.
 */

/** Small, so that the bodies around it are quick to send: the upload route's limit is this plus the form's framing. */
const FILE_MAX_BYTES = 256 * 1024;
/** What an attacker sends: the 150 MB of the reported case. */
const HUGE = 150 * 1024 * 1024;
const CHUNK = 64 * 1024;
/**
 * What the server may read beyond what it decided on: Node reads a socket up to 64 KiB at a time
 * and a paused request keeps a few of those buffered. Far below any limit's multiple.
 */
const READ_AHEAD = 512 * 1024;

const JPEG_START = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46]);
const BOUNDARY = "----studyflow-test-boundary";

/** Chunks of `total` bytes (the first ones given), produced as the socket takes them, never all at once. */
function* chunksOf(total: number, first: Buffer[] = []): Generator<Buffer> {
  let left = total;
  for (const part of first) {
    yield part;
    left -= part.length;
  }
  const filler = Buffer.alloc(CHUNK, 0x41);
  while (left > 0) {
    const next = Math.min(left, CHUNK);
    yield next === CHUNK ? filler : filler.subarray(0, next);
    left -= next;
  }
}

/** The start of a JSON object whose one string runs on for the rest of the body. */
const jsonStart = () => Buffer.from('{"profileID":"x","file":"');

/** A multipart form with profileID and a JPEG file part of `fileBytes` bytes, whole. */
function multipart(profileId: string, fileBytes: number): { head: Buffer; tail: Buffer; total: number } {
  const head = Buffer.concat([
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="profileID"\r\n\r\n${profileId}\r\n` +
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="bite.jpg"\r\n` +
        `Content-Type: image/jpeg\r\n\r\n`,
    ),
    JPEG_START,
  ]);
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  return { head, tail, total: head.length - JPEG_START.length + fileBytes + tail.length };
}

describe("request bodies are bounded before they are read", () => {
  let t: TestApp;
  let server: ProbedServer;
  let study: Awaited<ReturnType<typeof setupStudy>>;

  beforeAll(async () => {
    t = await createTestApp({ env: { PARTICIPANT_FILE_MAX_BYTES: String(FILE_MAX_BYTES) } });
    study = await setupStudy(t, { key: "ticks" });
    await setParticipantFileUploadRule(t.database.db, "ticks", { name: "gt", data: [num(1), num(0)] }, "test", {
      clock: systemClock,
    });
    await t.settle();
    server = await startProbedServer(t);
  });
  afterAll(async () => {
    await server?.close();
    await t?.close();
  });

  const post = (path: string, headers: Record<string, string>, chunks: Iterable<Buffer>) =>
    server.post(path, headers, chunks);

  const uploadPath = `/v1/study-service/participant-data/ticks/files`;

  async function enrolled() {
    const user = await participantUser(t);
    const profileId = user.profiles[0]!.id;
    await insertParticipant(t.database.db, { studyKey: "ticks", participantId: participantIdOf(study, profileId) });
    return { token: user.token, profileId };
  }

  const fileRows = async () => {
    const [files] = await t.database.db.select({ n: count() }).from(participantFiles);
    const [stored] = await t.database.db.select({ n: count() }).from(storedFiles);
    return { files: files!.n, stored: stored!.n };
  };

  it("answers an unauthenticated 150 MB JSON POST to the upload path with 401, reading none of it", async () => {
    const before = await fileRows();
    const answer = await post(uploadPath, { "Content-Type": "application/json" }, chunksOf(HUGE, [jsonStart()]));
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({ error: expect.any(String) });
    // the server took in at most what a socket reads ahead, and answered long before the end
    expect(answer.serverRead).toBeGreaterThan(0);
    expect(answer.serverRead).toBeLessThan(READ_AHEAD);
    expect(answer.sentAtAnswer).toBeLessThan(HUGE / 10);
    expect(await fileRows()).toEqual(before);
  });

  it("answers an unauthenticated upload declaring 150 MB with 401 at once", async () => {
    const answer = await post(
      uploadPath,
      { "Content-Type": `multipart/form-data; boundary=${BOUNDARY}`, "Content-Length": String(HUGE) },
      chunksOf(HUGE),
    );
    expect(answer.status).toBe(401);
    expect(answer.serverRead).toBeLessThan(READ_AHEAD);
    expect(answer.sentAtAnswer).toBeLessThan(HUGE / 10);
  });

  it("answers a signed-in upload that is no multipart form with 415, without reading it", async () => {
    const who = await enrolled();
    for (const type of ["application/json", "text/plain", "application/x-www-form-urlencoded", "image/jpeg"]) {
      const answer = await post(
        uploadPath,
        { ...bearer(who.token), "Content-Type": type },
        chunksOf(HUGE, [jsonStart()]),
      );
      expect(answer.status, type).toBe(415);
      expect(answer.body, type).toEqual({ error: expect.stringMatching(/multipart\/form-data/) });
      expect(answer.serverRead, type).toBeLessThan(READ_AHEAD);
      expect(answer.sentAtAnswer, type).toBeLessThan(HUGE / 10);
    }
    const none = await post(uploadPath, bearer(who.token), chunksOf(CHUNK));
    expect(none.status).toBe(415);
  });

  it("refuses a signed-in chunked upload once its file passes the limit (413), having read no more than the limit; nothing stored", async () => {
    const who = await enrolled();
    const before = await fileRows();
    const form = multipart(who.profileId, HUGE);
    const answer = await post(
      uploadPath,
      { ...bearer(who.token), "Content-Type": `multipart/form-data; boundary=${BOUNDARY}` },
      chunksOf(HUGE, [form.head]),
    );
    expect(answer.status).toBe(413);
    expect(answer.body).toEqual({ error: `file: the upload is larger than the ${FILE_MAX_BYTES} bytes allowed` });
    // the form is parsed as it arrives: the file's limit, not the body's bound, ends the read
    expect(answer.serverRead).toBeGreaterThan(FILE_MAX_BYTES);
    expect(answer.serverRead).toBeLessThan(FILE_MAX_BYTES + READ_AHEAD);
    expect(answer.sentAtAnswer).toBeLessThan(HUGE / 10);
    expect(await fileRows()).toEqual(before);
  });

  it("refuses a signed-in upload whose Content-Length is over the limit at once (413); nothing stored", async () => {
    const who = await enrolled();
    const before = await fileRows();
    const form = multipart(who.profileId, FILE_MAX_BYTES * 4);
    const answer = await post(
      uploadPath,
      {
        ...bearer(who.token),
        "Content-Type": `multipart/form-data; boundary=${BOUNDARY}`,
        "Content-Length": String(form.total),
      },
      chunksOf(form.total - form.tail.length, [form.head]),
    );
    expect(answer.status).toBe(413);
    expect(answer.body).toEqual({ error: expect.stringMatching(/^file: the upload is larger than/) });
    expect(answer.serverRead).toBeLessThan(READ_AHEAD);
    expect(await fileRows()).toEqual(before);
  });

  it("still takes an upload within the limit, chunked or with its length", async () => {
    const who = await enrolled();
    const before = await fileRows();
    const form = multipart(who.profileId, FILE_MAX_BYTES);
    const whole = [...chunksOf(form.total - form.tail.length, [form.head]), form.tail];
    const headers = { ...bearer(who.token), "Content-Type": `multipart/form-data; boundary=${BOUNDARY}` };

    const chunked = await post(uploadPath, headers, whole);
    expect(chunked.status, JSON.stringify(chunked.body)).toBe(200);
    expect(chunked.body).toMatchObject({ fileInfo: { fileType: "image/jpeg", size: FILE_MAX_BYTES } });

    const declared = await post(uploadPath, { ...headers, "Content-Length": String(form.total) }, whole);
    expect(declared.status, JSON.stringify(declared.body)).toBe(200);

    const { fileInfo } = chunked.body as { fileInfo: { id: string } };
    const [row] = await t.database.db.select().from(participantFiles).where(eq(participantFiles.id, fileInfo.id));
    expect(row).toMatchObject({ size: FILE_MAX_BYTES, fileType: "image/jpeg" });
    expect(await fileRows()).toEqual({ files: before.files + 2, stored: before.stored + 2 });
  });

  it("answers a 150 MB body on any other route with 413 once past the general limit, whoever sends it", async () => {
    const chunked = await post("/v1/auth/login", { "Content-Type": "application/json" }, chunksOf(HUGE, [jsonStart()]));
    expect(chunked.status).toBe(413);
    expect(chunked.body).toEqual({ error: `request body larger than ${MAX_BODY_BYTES} bytes` });
    expect(chunked.serverRead).toBeLessThan(MAX_BODY_BYTES + READ_AHEAD);
    expect(chunked.sentAtAnswer).toBeLessThan(HUGE / 10);

    const declared = await post(
      "/v1/studies",
      { "Content-Type": "text/plain", "Content-Length": String(HUGE) },
      chunksOf(HUGE),
    );
    expect(declared.status).toBe(413);
    expect(declared.serverRead).toBeLessThan(READ_AHEAD);
  });
});
