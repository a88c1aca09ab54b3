import { readFile, stat } from "node:fs/promises";
import { isAbsolute, relative, resolve } from "node:path";
import { eq } from "drizzle-orm";
import { participantFiles, storedFiles, type Executor } from "@studyflow/db";
import type { FileStore } from "../files/file-store";
import {
  FILE_STATUS_READY,
  KEPT_UNTIL_DELETED,
  participantFileName,
  UPLOAD_PART_BYTES,
} from "../participant-files/participant-files";
import {
  asNumber,
  asString,
  caseAccountUuid,
  canonicalJson,
  documentId,
  isObjectIdHex,
  type CaseDocument,
} from "./case-values";
import { absentParticipantFiles } from "./import-absent";
import {
  INSERTED,
  noted,
  skipped,
  UNCHANGED,
  UPDATED,
  type CollectionImporter,
  type DocumentOutcome,
} from "./import-batch";
import { goTime } from "./import-record";

/**
 * `<studyKey>_participantFiles` (case-backend's types.FileInfo): the metadata of each file a
 * participant uploaded, and its bytes from case-backend's file folder (its filestore path, where
 * the document's `path` is `<instance>/<studyKey>/<id><ext>`). The file keeps its ObjectId as its
 * UUID, so a rerun finds it and the bytes are written once. case-backend's visibleToParticipant,
 * uploadedBy and previewPath have no place in studyflow and are not carried.
 */

export interface ParticipantFileSource {
  /** case-backend's participant file folder; without it only the metadata comes in. */
  filesDir?: string;
  /** Where the bytes go: the deployment's file store. Needed with filesDir. */
  store?: FileStore;
}

export const BYTES_NOT_CARRIED = "bytes not carried (no --files-dir)";

type FileRow = typeof participantFiles.$inferInsert & { id: string; createdAt: Date };

function planFile(studyKey: string, document: CaseDocument): FileRow | string {
  const objectId = documentId(document);
  if (!isObjectIdHex(objectId)) return "the file has no ObjectId _id";
  const status = asString(document["status"]);
  if (status !== FILE_STATUS_READY) return `the upload never finished in CASE (status "${status}")`;
  const participantId = asString(document["participantID"]);
  if (participantId === "") return "the file has no participantID";
  const fileType = asString(document["fileType"]);
  if (fileType === "") return "the file has no fileType";
  const submittedAt = asNumber(document["submittedAt"]);
  const createdAt =
    goTime(document["createdAt"]) ??
    (submittedAt > 0 ? new Date(submittedAt * 1000) : new Date(parseInt(objectId.slice(0, 8), 16) * 1000));
  return {
    id: caseAccountUuid(objectId),
    studyKey,
    participantId,
    fileType,
    size: asNumber(document["size"]),
    status: FILE_STATUS_READY,
    createdAt,
  };
}

const contentOf = (row: Pick<FileRow, "studyKey" | "participantId" | "fileType" | "size" | "createdAt">) =>
  canonicalJson([row.studyKey, row.participantId, row.fileType, row.size, row.createdAt.getTime()]);

/** The file on disk the document names, or why its bytes cannot come along. */
async function locateBytes(filesDir: string, path: string): Promise<{ file: string } | { note: string }> {
  if (path === "") return { note: "bytes not carried: CASE kept no path for the file" };
  const file = resolve(filesDir, path);
  const inside = relative(resolve(filesDir), file);
  if (inside === "" || inside.startsWith("..") || isAbsolute(inside)) {
    return { note: `bytes not carried: path "${path}" points outside --files-dir` };
  }
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile()) return { note: `bytes not carried: ${path} is not in --files-dir` };
  return { file };
}

async function hasBytes(tx: Executor, storedFileId: string | null): Promise<boolean> {
  if (storedFileId === null) return false;
  const [stored] = await tx.select().from(storedFiles).where(eq(storedFiles.id, storedFileId)).limit(1);
  return stored !== undefined && stored.complete && stored.expiredAt === null;
}

/** The bytes into the store as an upload stores them; the stored file's id. */
async function storeBytes(tx: Executor, store: FileStore, row: FileRow, file: string): Promise<string> {
  const bytes = await readFile(file);
  const stored = await store.create(tx, {
    studyKey: row.studyKey,
    name: participantFileName(row),
    contentType: row.fileType,
    gzip: false,
    expiresAt: KEPT_UNTIL_DELETED,
  });
  for (let seq = 0; seq * UPLOAD_PART_BYTES < bytes.byteLength; seq++) {
    const part = bytes.subarray(seq * UPLOAD_PART_BYTES, (seq + 1) * UPLOAD_PART_BYTES);
    await store.writePart(tx, stored, { chunkIndex: 0, seq }, part, { rows: 0 });
  }
  await store.complete(tx, stored.id, 0);
  return stored.id;
}

/**
 * Metadata unchanged and bytes already there (or none to add) is unchanged; a file whose bytes
 * come along only now is updated. A file without its bytes is still imported and reported.
 */
export function participantFilesImporter(studyKey: string, source: ParticipantFileSource): CollectionImporter {
  return {
    absent: absentParticipantFiles(studyKey, source.store),
    importBatch: async (tx, batch, write) => {
      const outcomes: DocumentOutcome[] = [];
      for (const { document } of batch) {
        const row = planFile(studyKey, document);
        if (typeof row === "string") {
          outcomes.push(skipped(row));
          continue;
        }
        const [existing] = await tx.select().from(participantFiles).where(eq(participantFiles.id, row.id)).limit(1);
        const bytesThere = existing !== undefined && (await hasBytes(tx, existing.storedFileId));
        let note: string | undefined;
        let bytesFile: string | undefined;
        if (!bytesThere) {
          if (source.filesDir === undefined) note = BYTES_NOT_CARRIED;
          else {
            const located = await locateBytes(source.filesDir, asString(document["path"]));
            if ("note" in located) note = located.note;
            else bytesFile = located.file;
          }
        }
        const same = existing !== undefined && contentOf(existing) === contentOf(row);
        const outcome = same && bytesFile === undefined ? UNCHANGED : existing ? UPDATED : INSERTED;
        if (write && outcome !== UNCHANGED) {
          const storedFileId =
            bytesFile !== undefined && source.store
              ? await storeBytes(tx, source.store, row, bytesFile)
              : (existing?.storedFileId ?? null);
          const values = { ...row, storedFileId };
          await tx
            .insert(participantFiles)
            .values(values)
            .onConflictDoUpdate({ target: participantFiles.id, set: values });
        }
        outcomes.push(noted(outcome, note));
      }
      return outcomes;
    },
  };
}
