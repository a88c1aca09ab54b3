import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, participants, studies } from "@studyflow/db";
import { createFileStore } from "@studyflow/domain/files";
import { uploadParticipantFile } from "@studyflow/domain/participant-files";
import { participantIdsForProfile } from "@studyflow/domain/participants";
import { createStudy, createUserWithProfiles } from "@studyflow/domain/study-setup";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";
import { usage } from "../src/index";
import { runCommandLine } from "./run-command-line";

let database: TestDatabase;
let workDir: string;
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 4, 5, 6, 7, 8]);
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 9, 9]);
const ALLOW_ALL = {
  name: "gt",
  data: [
    { dtype: "num", num: 1 },
    { dtype: "num", num: 0 },
  ],
};
let participantId: string;
const uploadedIds: string[] = [];

const run = (argv: string[]) => runCommandLine(database, argv, workDir);

beforeAll(async () => {
  database = await createTestDatabase();
  workDir = await mkdtemp(path.join(tmpdir(), "participant-files-cli-"));
  const study = await createStudy(database.db, { key: "ticks" });
  const { profiles } = await createUserWithProfiles(database.db, {
    now: new Date(),
    email: "cli-files@example.org",
    password: "Correct-Horse-Battery-9",
    profiles: ["main"],
  });
  participantId = participantIdsForProfile(study.secret, profiles[0]!.id).participantId;
  const now = Math.floor(Date.now() / 1000);
  await database.db
    .insert(participants)
    .values({ studyKey: "ticks", participantId, studyStatus: "active", enteredAt: now, modifiedAt: now });
  await writeFile(path.join(workDir, "allow.json"), JSON.stringify(ALLOW_ALL));
  // the rule is set through the command, then two files are uploaded as the API does
  expect((await run(["participant-files:upload-rule", "--study", "ticks", "--rule", "allow.json"])).exitCode).toBe(0);
  const store = createFileStore(database.db);
  for (const [i, bytes] of [JPEG, PNG].entries()) {
    const row = await uploadParticipantFile(
      database.db,
      store,
      {
        studyKey: "ticks",
        profileId: profiles[0]!.id,
        bytes,
        limits: { maxBytes: 1024, contentTypes: ["image/jpeg", "image/png"] },
      },
      { clock: () => Date.UTC(2026, 0, 1 + i) },
    );
    uploadedIds.push(row.id);
  }
});
afterAll(async () => {
  await database.drop();
  await rm(workDir, { recursive: true, force: true });
});

describe("participant-files commands", () => {
  it("are listed in the usage", () => {
    const text = usage();
    expect(text).toContain("participant-files:list --study KEY");
    expect(text).toContain("participant-files:get --study KEY --file ID");
    expect(text).toContain("participant-files:upload-rule --study KEY");
  });

  it("upload-rule stores the expression, audited; --clear removes it; a bad expression is refused", async () => {
    const [study] = await database.db.select().from(studies).where(eq(studies.key, "ticks"));
    expect(study!.config.participantFileUploadRule).toEqual(ALLOW_ALL);
    const audits = await database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.studyKey, "ticks"), eq(auditLog.action, "study.config.update")));
    expect(audits.at(-1)!.details).toEqual({ participantFileUploadRule: { from: null, to: ALLOW_ALL } });

    await writeFile(path.join(workDir, "bad.json"), JSON.stringify({ name: "noSuchFunction", data: [] }));
    const bad = await run(["participant-files:upload-rule", "--study", "ticks", "--rule", "bad.json"]);
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toContain("participantFileUploadRule");
    const neither = await run(["participant-files:upload-rule", "--study", "ticks"]);
    expect(neither.exitCode).toBe(1);
    expect(neither.stderr).toContain("give either --rule FILE or --clear");

    await database.db.insert(studies).values({ key: "other", secret: "s" });
    expect((await run(["participant-files:upload-rule", "--study", "other", "--clear"])).exitCode).toBe(0);
    const [other] = await database.db.select().from(studies).where(eq(studies.key, "other"));
    expect(other!.config).not.toHaveProperty("participantFileUploadRule");
    expect((await run(["participant-files:upload-rule", "--study", "nope", "--clear"])).exitCode).toBe(1);
  });

  it("list shows a study's files newest first, all or one participant's", async () => {
    const listed = await run(["participant-files:list", "--study", "ticks", "--json"]);
    expect(listed.exitCode).toBe(0);
    const data = JSON.parse(listed.stdout) as { totalCount: number; files: { id: string; fileType: string }[] };
    expect(data.totalCount).toBe(2);
    expect(data.files.map((file) => [file.id, file.fileType])).toEqual([
      [uploadedIds[1], "image/png"],
      [uploadedIds[0], "image/jpeg"],
    ]);
    const text = await run(["participant-files:list", "--study", "ticks", "--participant", participantId]);
    expect(text.stdout).toContain(`2 files of participant "${participantId}" in study "ticks"`);
    const none = await run(["participant-files:list", "--study", "ticks", "--participant", "someone-else"]);
    expect(none.stdout).toContain("0 files");
    expect((await run(["participant-files:list", "--study", "nope"])).exitCode).toBe(1);
  });

  it("get writes the file's bytes, by its own name or to --out, never over an existing file by default", async () => {
    const got = await run(["participant-files:get", "--study", "ticks", "--file", uploadedIds[0]!, "--json"]);
    expect(got.exitCode, got.stderr).toBe(0);
    const written = path.join(workDir, `${uploadedIds[0]}.jpg`);
    expect(JSON.parse(got.stdout)).toMatchObject({ id: uploadedIds[0], fileType: "image/jpeg", path: written });
    expect((await readFile(written)).equals(JPEG)).toBe(true);
    const again = await run(["participant-files:get", "--study", "ticks", "--file", uploadedIds[0]!]);
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toContain("exists");

    const out = await run([
      "participant-files:get",
      "--study",
      "ticks",
      "--file",
      uploadedIds[1]!,
      "--out",
      "bite.png",
    ]);
    expect(out.exitCode).toBe(0);
    expect((await readFile(path.join(workDir, "bite.png"))).equals(PNG)).toBe(true);

    const missing = await run([
      "participant-files:get",
      "--study",
      "ticks",
      "--file",
      "00000000-0000-0000-0000-000000000000",
    ]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain("not found");
  });
});
