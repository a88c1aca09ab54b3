/**
 * Dumps of a case-backend instance for tests: documents shaped as case-backend's Go types write
 * them with the mongo driver (pkg/study/types, pkg/user-management/types): ObjectIDs, int64 times
 * as BSON int64, int32s, nil maps and slices as null, fields in struct order; written as
 * mongodump writes them, one `<collection>.bson` (or `.bson.gz`) of documents back to back and
 * a `<collection>.metadata.json` per collection.
 */
import { argon2Sync, randomBytes } from "node:crypto";
import type { Database } from "@studyflow/db";
import { importCaseDump, type CaseImportOptions, type CaseImportProblem } from "@studyflow/domain/case-import";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { Double, Int32, Long, ObjectId, serialize, type Document } from "bson";

/** An argon2id hash as case-backend's pwhash writes it (no one signs in with it in these tests). */
export const CASE_PASSWORD_HASH =
  "$argon2id$v=19$m=65536,t=4,p=1$c2FsdHNhbHRzYWx0c2FsdA$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U";

/** A document whose length is right and whose content is no BSON (element type 0x20 does not exist). */
export const UNREADABLE_DOCUMENT = Buffer.from([0x0a, 0, 0, 0, 0x20, 0x61, 0x00, 0x00, 0x00, 0x00]);

export const int64 = (value: number) => Long.fromNumber(value);

/** pwhash.HashPassword with case-backend's default parameters (argon2id, 64 MiB, t=4, p=1). */
export function caseBackendHash(password: string): string {
  const memory = 64 * 1024;
  const salt = randomBytes(16);
  const key = argon2Sync("argon2id", {
    message: Buffer.from(password),
    nonce: salt,
    memory,
    passes: 4,
    parallelism: 1,
    tagLength: 32,
  });
  const raw = (bytes: Buffer) => bytes.toString("base64").replace(/=+$/, "");
  return `$argon2id$v=19$m=${memory},t=4,p=1$${raw(salt)}$${raw(key)}`;
}

const localised = (code: string, text: string) => ({ code, parts: [{ dtype: "str", str: text }] });

/** types.Study */
export function caseStudy(
  key: string,
  over: { idMappingMethod?: string; status?: string; secretKey?: string; systemDefaultStudy?: boolean } = {},
) {
  return {
    _id: new ObjectId(),
    key,
    secretKey: over.secretKey ?? `secret-of-${key}`,
    status: over.status ?? "active",
    props: {
      name: [localised("en", `Study ${key}`), localised("de", `Studie ${key}`)],
      description: [localised("en", `About ${key}`)],
      tags: [{ label: [localised("en", "ticks"), localised("nl", "teken")] }],
      startDate: int64(1_700_000_000),
      endDate: int64(0),
      systemDefaultStudy: over.systemDefaultStudy ?? false,
    },
    configs: {
      participantFileUploadRule: null,
      idMappingMethod: over.idMappingMethod ?? "sha256",
      trackAccount: false,
    },
    notificationSubscriptions: [{ messageType: "*", email: "researcher@example.org" }],
    studyStats: { participantCount: int64(2), tempParticipantCount: int64(0), responseCount: int64(5) },
    nextTimerEvent: int64(1_700_000_500),
    rules: null,
  };
}

/** An Expression that sets a flag on ENTER: `IFTHEN(checkEventType("ENTER"), UPDATE_FLAG("from", value))`. */
export function enterRule(value: string) {
  return {
    name: "IFTHEN",
    data: [
      { dtype: "exp", exp: { name: "checkEventType", data: [{ dtype: "str", str: "ENTER" }] } },
      {
        dtype: "exp",
        exp: {
          name: "UPDATE_FLAG",
          data: [
            { dtype: "str", str: "from" },
            { dtype: "str", str: value },
          ],
        },
      },
    ],
  };
}

/** types.StudyRules, with `rules` or (newer case-backends) `serialisedRules`. */
export function caseRules(studyKey: string, uploadedAt: number, rules: unknown[], serialised = false) {
  return {
    _id: new ObjectId(),
    studyKey,
    uploadedAt: int64(uploadedAt),
    uploadedBy: "researcher@example.org",
    ...(serialised ? { serialisedRules: JSON.stringify(rules) } : { rules }),
  };
}

/** types.Survey as stored (omitempty fields left out when empty). */
export function caseSurvey(surveyKey: string, versionId: string, published: number, unpublished = 0) {
  return {
    _id: new ObjectId(),
    props: { name: [localised("en", `Survey ${surveyKey}`)] },
    availableFor: "active_participants",
    published: int64(published),
    ...(unpublished > 0 ? { unpublished: int64(unpublished) } : {}),
    surveyDefinition: {
      key: surveyKey,
      items: [
        {
          key: `${surveyKey}.Q1`,
          priority: new Double(1.5),
          components: {
            role: "root",
            key: "",
            content: [],
            items: [{ role: "input", key: "rg", content: [localised("en", "How are you?")], description: null }],
            description: null,
          },
          validations: [
            { key: "v1", type: "hard", expression: { name: "isDefined", data: [{ dtype: "str", str: "x" }] } },
          ],
        },
      ],
    },
    versionID: versionId,
    metadata: { author: "case-editor" },
  };
}

/** types.Participant */
export function caseParticipant(
  participantID: string,
  over: Partial<{ studyStatus: string; messages: Document[] }> = {},
) {
  return {
    _id: new ObjectId(),
    participantID,
    currentStudySession: "",
    modifiedAt: int64(1_700_000_100),
    enteredAt: int64(1_700_000_000),
    studyStatus: over.studyStatus ?? "active",
    flags: { group: "a", consent: "yes" },
    linkingCodes: null,
    assignedSurveys: [
      {
        studyKey: "",
        surveyKey: "weekly",
        validFrom: int64(1_700_000_000),
        validUntil: int64(0),
        category: "prio",
        profileID: "",
      },
    ],
    lastSubmission: { intake: int64(1_700_000_050) },
    messages: over.messages ?? [],
  };
}

/** types.User with one or more profiles; the password hash as case-backend's pwhash stores it. */
export function caseUser(email: string, passwordHash: string, profileIds: ObjectId[]) {
  return {
    _id: new ObjectId(),
    account: {
      type: "email",
      accountID: email,
      accountConfirmedAt: int64(1_690_000_000),
      password: passwordHash,
      authType: "",
      verificationCode: { code: "", attempts: int64(0), createdAt: int64(0), expiresAt: int64(0) },
      preferredLanguage: "nl",
      failedLoginAttempts: null,
      passwordResetTriggers: [],
    },
    timestamps: {
      lastTokenRefresh: int64(0),
      lastLogin: int64(1_700_000_000),
      createdAt: int64(1_690_000_000),
      updatedAt: int64(1_700_000_000),
      lastPasswordChange: int64(0),
      reminderToConfirmSentAt: int64(0),
      markedForDeletion: int64(0),
    },
    profiles: profileIds.map((id, i) => ({
      _id: id,
      alias: i === 0 ? email : `child ${i}`,
      consentConfirmedAt: int64(1_690_000_000),
      createdAt: int64(1_690_000_000),
      avatarID: i === 0 ? "default" : "bird",
      mainProfile: i === 0,
    })),
    contactPreferences: {
      subscribedToNewsletter: true,
      sendNewsletterTo: [],
      subscribedToWeekly: true,
      receiveWeeklyMessageDayOfWeek: new Int32(3),
    },
    contactInfos: [
      {
        _id: new ObjectId(),
        type: "email",
        confirmedAt: int64(1_690_000_000),
        confirmationLinkSentAt: int64(0),
        email,
      },
    ],
  };
}

export interface DumpSpec {
  prefix?: string;
  instance: string;
  gzip?: boolean;
  /** database kind ("studyDB", "users") → collection → documents, or raw bytes for a damaged file */
  databases: Record<string, Record<string, (Document | Buffer)[]>>;
}

/** Writes the dump under `dir` as mongodump lays it out; returns dir. */
export async function writeCaseDump(dir: string, spec: DumpSpec): Promise<string> {
  for (const [kind, collections] of Object.entries(spec.databases)) {
    const folder = join(dir, `${spec.prefix ?? ""}${spec.instance}_${kind}`);
    await mkdir(folder, { recursive: true });
    for (const [name, documents] of Object.entries(collections)) {
      const bytes = Buffer.concat(documents.map((doc) => (Buffer.isBuffer(doc) ? doc : Buffer.from(serialize(doc)))));
      await writeFile(join(folder, `${name}.bson${spec.gzip ? ".gz" : ""}`), spec.gzip ? gzipSync(bytes) : bytes);
      const metadata = JSON.stringify({ indexes: [{ v: 2, key: { _id: 1 }, name: "_id_" }], collectionName: name });
      await writeFile(join(folder, `${name}.metadata.json`), metadata);
    }
  }
  return dir;
}

/** types.SurveyResponse as AddSurveyResponse stores it (context.session set by case-backend). */
export function caseResponse(
  participantID: string,
  key: string,
  versionID: string,
  submittedAt: number,
  over: Partial<{ _id: ObjectId; value: string }> = {},
) {
  return {
    _id: over._id ?? new ObjectId(),
    key,
    participantID,
    versionID,
    openedAt: int64(submittedAt - 60),
    submittedAt: int64(submittedAt),
    arrivedAt: int64(submittedAt + 1),
    responses: [
      {
        key: `${key}.Q1`,
        meta: {
          position: new Int32(0),
          localeCode: "en",
          rendered: [int64(submittedAt - 50)],
          displayed: null,
          responded: [int64(submittedAt - 10)],
        },
        response: { key: "rg", items: [{ key: "scg", items: [{ key: over.value ?? "2" }] }] },
      },
    ],
    context: { session: "", engineVersion: "1.2.0" },
  };
}

/** types.Report; one never modified has Go's zero time as modifiedAt (omitempty does not drop a time.Time). */
export function caseReport(participantID: string, key: string, responseID: string, timestamp: number) {
  return {
    _id: new ObjectId(),
    key,
    participantID,
    responseID,
    timestamp: int64(timestamp),
    modifiedAt: new Date("0001-01-01T00:00:00Z"),
    data: [
      { key: "fever", value: "yes", dtype: "string" },
      { key: "count", value: "3" },
    ],
  };
}

/** A confidential item as saveResponses stores it: a SurveyResponse under the confidential id, meta emptied. */
export function caseConfidentialResponse(confidentialID: string, key: string, value: string) {
  return {
    _id: new ObjectId(),
    key,
    participantID: confidentialID,
    versionID: "",
    openedAt: int64(0),
    submittedAt: int64(0),
    arrivedAt: int64(0),
    responses: [
      {
        key,
        meta: { position: new Int32(0), localeCode: "", rendered: null, displayed: null, responded: null },
        response: { key: "rg", items: [{ key: "txt", value }] },
        confidentialMode: "replace",
      },
    ],
    context: null,
  };
}

/** An entry of `confidential-id-map` as AddConfidentialIDMapEntry inserts it (a bson.M, _id added by the driver). */
export const caseConfidentialIdMapEntry = (studyKey: string, confidentialID: string, profileID: string) => ({
  _id: new ObjectId(),
  confidentialID,
  profileID,
  studyKey,
});

/** types.StudyCodeListEntry */
export const caseCodeListEntry = (studyKey: string, listKey: string, code: string, addedAt: Date) => ({
  _id: new ObjectId(),
  studyKey,
  listKey,
  code,
  addedAt,
});

/** StudyCounter, as IncrementAndGetStudyCounterValue upserts it. */
export const caseCounter = (studyKey: string, scope: string, value: number) => ({
  _id: new ObjectId(),
  scope,
  studyKey,
  value: int64(value),
});

/** types.StudyVariables */
export function caseStudyVariable(studyKey: string, key: string, type: string, value: unknown) {
  return {
    _id: new ObjectId(),
    createdAt: new Date("2024-01-01T00:00:00Z"),
    configUpdatedAt: new Date("2024-01-02T00:00:00Z"),
    valueUpdatedAt: new Date("2024-01-03T00:00:00Z"),
    studyKey,
    key,
    value,
    type,
    label: `Label of ${key}`,
    description: "",
    uiType: "",
    uiPriority: int64(2),
    configs: type === "int" ? { min: int64(0), max: int64(100) } : null,
  };
}

/**
 * types.FileInfo as the participant API leaves it after an upload: status ready, `path` relative
 * to case-backend's filestore path (`<instance>/<studyKey>/<id><ext>`), createdAt a BSON date.
 */
export function caseParticipantFile(
  instance: string,
  studyKey: string,
  participantID: string,
  over: Partial<{ _id: ObjectId; fileType: string; size: number; status: string; path: string }> = {},
) {
  const _id = over._id ?? new ObjectId();
  const fileType = over.fileType ?? "image/png";
  const extension = fileType === "image/png" ? ".png" : fileType === "application/pdf" ? ".pdf" : ".jpg";
  return {
    _id,
    participantID,
    status: over.status ?? "ready",
    path: over.path ?? `${instance}/${studyKey}/${_id.toHexString()}${extension}`,
    createdAt: new Date("2024-06-01T08:00:00Z"),
    fileType,
    visibleToParticipant: true,
    size: int64(over.size ?? 0),
  };
}

/** types.StudyMessage as NOTIFY_RESEARCHER saves it (omitempty drops an empty payload). */
export const caseResearcherMessage = (type: string, participantID: string, payload: Record<string, string>) => ({
  _id: new ObjectId(),
  type,
  payload,
  participantID,
});

/** types.UserAttributes of the users database. */
export const caseUserAttributes = (userId: ObjectId, type: string, attributes: Record<string, unknown> | null) => ({
  _id: new ObjectId(),
  userId,
  type,
  attributes,
  createdAt: new Date("2024-07-01T12:00:00Z"),
});

/** Runs the import as the tests' clock's day (2026-01-01); returns its summary and the problems it reported. */
export async function runCaseImport(db: Database, options: CaseImportOptions) {
  const problems: CaseImportProblem[] = [];
  const summary = await importCaseDump(
    db,
    options,
    { problem: (p) => void problems.push(p) },
    { clock: CASE_IMPORT_TEST_CLOCK },
  );
  return { summary, problems };
}

export const CASE_IMPORT_TEST_CLOCK = () => Date.UTC(2026, 0, 1);
