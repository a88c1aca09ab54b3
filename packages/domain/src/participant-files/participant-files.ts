import { randomUUID } from "node:crypto";
import type { Readable } from "node:stream";
import { and, count, desc, eq, type SQL } from "drizzle-orm";
import { participantFiles, participants, storedFiles, type Database, type Executor } from "@studyflow/db";
import { translateCaseFilter } from "../case-filter/index";
import { DomainError, Forbidden, Invalid, NotFound } from "../errors";
import type { DomainContext } from "../events/event-runner";
import type { FileStore } from "../files/file-store";
import { participantIdsInStudy } from "../participants/participant-ids";
import { getActiveStudy, getStudy, type StudyRow } from "../studies/study-repository";
import { detectFileType, extensionOf, type ParticipantFileType } from "./file-types";
import { checkUploadRule } from "./upload-rule";

export type ParticipantFileRow = typeof participantFiles.$inferSelect;

/** CASE's file statuses; an upload is one transaction here, so a listed file is always ready. */
export const FILE_STATUS_READY = "ready";

/**
 * Participant files are kept until someone deletes them. The shared store's retention removes
 * export files by age unless their expires_at says otherwise, so a participant file's record
 * carries this date instead of none.
 */
export const KEPT_UNTIL_DELETED = new Date("9999-12-31T00:00:00.000Z");

/**
 * Bytes of a stored part of an uploaded file. The PostgreSQL driver sends a bytea as hex text: a
 * part in flight takes several times its size in memory (a copy, its hex string, the message it
 * is written into). Written whole, a 20 MiB photo would hold several times 20 MiB while it is
 * stored; in parts of 1 MiB, a few MiB at a time. It is read back part by part too.
 */
export const UPLOAD_PART_BYTES = 1024 * 1024;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What an upload may be: set by the deployment (PARTICIPANT_FILE_MAX_BYTES, PARTICIPANT_FILE_TYPES). */
export interface ParticipantFileLimits {
  maxBytes: number;
  contentTypes: readonly ParticipantFileType[];
}

export interface ParticipantFileUpload {
  studyKey: string;
  /** A profile of the signed-in user (the caller has checked that). */
  profileId: string;
  bytes: Uint8Array;
  limits: ParticipantFileLimits;
}

/** The stored name of a file: its id and the extension of its type, as case-backend names it. */
export const participantFileName = (file: Pick<ParticipantFileRow, "id" | "fileType">) =>
  `${file.id}${extensionOf(file.fileType)}`;

const mebibytes = (bytes: number) => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`;

/**
 * Checks the size and the type the bytes are (not what the client declared).
 * @throws DomainError payload-too-large, Invalid for an empty file or a type not allowed.
 */
export function checkUploadedBytes(bytes: Uint8Array, limits: ParticipantFileLimits): ParticipantFileType {
  if (bytes.byteLength === 0) throw new Invalid("file: is empty");
  if (bytes.byteLength > limits.maxBytes) {
    throw new DomainError(
      "payload-too-large",
      `file: ${bytes.byteLength} bytes is larger than the ${mebibytes(limits.maxBytes)} (${limits.maxBytes} bytes) allowed`,
    );
  }
  const type = detectFileType(bytes);
  if (type === null || !limits.contentTypes.includes(type)) {
    throw new Invalid(
      `file: its content is ${type ?? "of no known type"}; allowed are ${limits.contentTypes.join(", ")} (read from the file's bytes, not its name or declared type)`,
    );
  }
  return type;
}

async function participantOfProfile(db: Executor, study: StudyRow, profileId: string) {
  const { participantId } = participantIdsInStudy(study, profileId);
  const [row] = await db
    .select()
    .from(participants)
    .where(and(eq(participants.studyKey, study.key), eq(participants.participantId, participantId)))
    .limit(1);
  if (!row) throw new NotFound(`profile is not a participant of study "${study.key}"`);
  return row;
}

/**
 * A participant uploads a file: its size and type are checked, then the study (active), the
 * participant and the study's upload rule; the bytes go to the shared file store and the
 * participant_files row is written in the same transaction (with the PostgreSQL store, the bytes
 * too: nothing is left half-stored; with the filesystem store a failed commit can leave an
 * unreferenced folder, never a row without bytes).
 *
 * case-backend runs no study rules on an upload (it only evaluates the upload rule), so neither
 * does this: no event, no state change.
 */
export async function uploadParticipantFile(
  db: Database,
  store: FileStore,
  input: ParticipantFileUpload,
  ctx: DomainContext,
): Promise<ParticipantFileRow> {
  const fileType = checkUploadedBytes(input.bytes, input.limits);
  const size = input.bytes.byteLength;
  return db.transaction(async (tx) => {
    const study = await getActiveStudy(tx, input.studyKey);
    const participant = await participantOfProfile(tx, study, input.profileId);
    const decision = await checkUploadRule(tx, study, participant, { size, contentType: fileType }, ctx);
    if (!decision.allowed) throw new Forbidden(`file upload not allowed: ${decision.reason}`);

    const id = randomUUID();
    const stored = await store.create(tx, {
      studyKey: study.key,
      name: participantFileName({ id, fileType }),
      contentType: fileType,
      gzip: false,
      expiresAt: KEPT_UNTIL_DELETED,
    });
    // views of the upload's one buffer, never copies of it
    for (let seq = 0; seq * UPLOAD_PART_BYTES < size; seq++) {
      const part = input.bytes.subarray(seq * UPLOAD_PART_BYTES, (seq + 1) * UPLOAD_PART_BYTES);
      await store.writePart(tx, stored, { chunkIndex: 0, seq }, part, { rows: 0 });
    }
    await store.complete(tx, stored.id, 0);
    const [row] = await tx
      .insert(participantFiles)
      .values({
        id,
        studyKey: study.key,
        participantId: participant.participantId,
        storedFileId: stored.id,
        fileType,
        size,
        status: FILE_STATUS_READY,
        createdAt: new Date(ctx.clock()),
      })
      .returning();
    if (!row) throw new Error("participant file insert returned nothing");
    return row;
  });
}

export interface FilePage {
  page: number;
  limit: number;
}

export interface ParticipantFilePage {
  files: ParticipantFileRow[];
  totalCount: number;
}

/** A page of the study's ready files matching `condition`, newest first, counted as case-backend counts it. */
async function pageOfFiles(
  db: Executor,
  studyKey: string,
  page: FilePage,
  condition?: SQL,
): Promise<ParticipantFilePage> {
  const where = and(eq(participantFiles.studyKey, studyKey), eq(participantFiles.status, FILE_STATUS_READY), condition);
  const [counted] = await db.select({ total: count() }).from(participantFiles).where(where);
  const totalCount = counted?.total ?? 0;
  const currentPage = totalCount < page.limit ? 1 : Math.max(1, page.page);
  const files = await db
    .select()
    .from(participantFiles)
    .where(where)
    .orderBy(desc(participantFiles.createdAt), desc(participantFiles.id))
    .limit(page.limit)
    .offset((currentPage - 1) * page.limit);
  return { files, totalCount };
}

/**
 * A page of a study's files, newest first, all of them or one participant's; the page is counted
 * as case-backend counts it (everything on one page when it fits, whatever page was asked).
 */
export async function listParticipantFiles(
  db: Executor,
  studyKey: string,
  page: FilePage,
  participantId?: string,
): Promise<ParticipantFilePage> {
  return pageOfFiles(
    db,
    studyKey,
    page,
    participantId === undefined ? undefined : eq(participantFiles.participantId, participantId),
  );
}

/**
 * A page of a study's files as the data explorer asks for them: CASE's file-info `filter`
 * (case-admin sends `{"participantID": …}`; `status` and `fileType` work too).
 * @throws NotFound for an unknown study, Invalid for a filter outside the subset.
 */
export async function listStudyParticipantFiles(
  db: Executor,
  studyKey: string,
  page: FilePage,
  filter?: unknown,
): Promise<ParticipantFilePage> {
  const condition = translateCaseFilter("files", filter);
  await getStudy(db, studyKey);
  return pageOfFiles(db, studyKey, page, condition);
}

/** The files of a profile's participant in an active study (none when it is no participant, as in case-backend). */
export async function listOwnParticipantFiles(
  db: Executor,
  studyKey: string,
  profileId: string,
  page: FilePage,
): Promise<ParticipantFilePage> {
  const study = await getActiveStudy(db, studyKey);
  const { participantId } = participantIdsInStudy(study, profileId);
  return listParticipantFiles(db, studyKey, page, participantId);
}

/** A file of a study; with `participantId`, only if it is that participant's. @throws NotFound */
export async function getParticipantFile(
  db: Executor,
  studyKey: string,
  fileId: string,
  participantId?: string,
): Promise<ParticipantFileRow> {
  const [row] = UUID.test(fileId)
    ? await db
        .select()
        .from(participantFiles)
        .where(
          and(
            eq(participantFiles.id, fileId),
            eq(participantFiles.studyKey, studyKey),
            participantId === undefined ? undefined : eq(participantFiles.participantId, participantId),
          ),
        )
        .limit(1)
    : [];
  // another participant's file is not found either: its existence is not the caller's to learn
  if (!row) throw new NotFound(`file "${fileId}" not found`);
  return row;
}

export interface OpenedParticipantFile {
  file: ParticipantFileRow;
  fileName: string;
  body: Readable;
}

async function openFile(db: Executor, store: FileStore, file: ParticipantFileRow): Promise<OpenedParticipantFile> {
  const [stored] = file.storedFileId
    ? await db.select().from(storedFiles).where(eq(storedFiles.id, file.storedFileId)).limit(1)
    : [];
  if (!stored?.complete || stored.expiredAt) throw new NotFound(`file "${file.id}" has no contents`);
  return { file, fileName: participantFileName(file), body: store.read(stored) };
}

/** A study's file as a researcher reads it. @throws NotFound */
export async function openParticipantFile(
  db: Executor,
  store: FileStore,
  studyKey: string,
  fileId: string,
): Promise<OpenedParticipantFile> {
  await getStudy(db, studyKey);
  return openFile(db, store, await getParticipantFile(db, studyKey, fileId));
}

async function ownFile(db: Executor, studyKey: string, profileId: string, fileId: string) {
  const study = await getActiveStudy(db, studyKey);
  const { participantId } = participantIdsInStudy(study, profileId);
  return getParticipantFile(db, studyKey, fileId, participantId);
}

/** A file of the profile's participant, streamed from the store. @throws NotFound for anyone else's */
export async function openOwnParticipantFile(
  db: Executor,
  store: FileStore,
  studyKey: string,
  profileId: string,
  fileId: string,
): Promise<OpenedParticipantFile> {
  return openFile(db, store, await ownFile(db, studyKey, profileId, fileId));
}

/**
 * Deletes a file: its row and its stored record and bytes, in one transaction (the filesystem
 * store removes its folder last, so a failed commit leaves the file readable, not a row without bytes).
 */
async function deleteFile(tx: Executor, store: FileStore, file: ParticipantFileRow): Promise<void> {
  await tx.delete(participantFiles).where(eq(participantFiles.id, file.id));
  if (!file.storedFileId) return;
  const [stored] = await tx.select().from(storedFiles).where(eq(storedFiles.id, file.storedFileId)).limit(1);
  if (!stored) return;
  await tx.delete(storedFiles).where(eq(storedFiles.id, stored.id));
  await store.removeContents(tx, stored);
}

/** The participant of a profile deletes one of its files. @throws NotFound for anyone else's */
export async function deleteOwnParticipantFile(
  db: Database,
  store: FileStore,
  studyKey: string,
  profileId: string,
  fileId: string,
): Promise<void> {
  await db.transaction(async (tx) => {
    const file = await ownFile(tx, studyKey, profileId, fileId);
    await deleteFile(tx, store, file);
  });
}

/** A researcher deletes a study's file, its record and bytes together. @throws NotFound */
export async function deleteParticipantFile(
  db: Database,
  store: FileStore,
  studyKey: string,
  fileId: string,
): Promise<void> {
  await db.transaction(async (tx) => {
    await getStudy(tx, studyKey);
    await deleteFile(tx, store, await getParticipantFile(tx, studyKey, fileId));
  });
}
