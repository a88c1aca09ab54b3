import { randomUUID } from "node:crypto";
import { and, eq, inArray, sql } from "drizzle-orm";
import { validateRules } from "@studyflow/engine";
import {
  CASE_ID_MAPPING_METHODS,
  caseImportRecords,
  participants,
  researcherSubscriptions,
  studies,
  studyRules,
  surveyVersions,
  type IdMappingMethod,
  type StoredAssignedSurvey,
  type StoredParticipantMessage,
  type StudyConfig,
  type StudyProps,
} from "@studyflow/db";
import type { ClockContext } from "../foundation/clock";
import { syncMessageSchedule } from "../participants/message-schedule";
import { copyRows } from "./bulk-rows";
import { localisedToTexts, PLAIN_TAG_LANGUAGE, type CaseLocalisedText } from "../study-config/case-props";
import { readSurveyDefinition } from "../surveys/survey-definition";
import {
  asArray,
  asNumber,
  asRecord,
  asString,
  canonicalJson,
  caseAccountUuid,
  contentHash,
  documentId,
  isObjectIdHex,
  toPlain,
  unixSecondsDate,
  type CaseDocument,
  type Plain,
} from "./case-values";
import { absentStudies } from "./import-absent";
import {
  IGNORED,
  IMPORT_ACTOR,
  INSERTED,
  skipped,
  UNCHANGED,
  UPDATED,
  type BatchDocument,
  type CollectionImporter,
  type DocumentOutcome,
} from "./import-batch";

/**
 * The study database of a CASE instance: `study-infos`, `studyRules` and each study's
 * `<studyKey>_surveys` and `<studyKey>_participants`, as case-backend's Go types write them
 * (pkg/study/types). Studies come first: the other collections import only the studies that
 * came through (`ImportedStudies`).
 */

/** The studies the study-infos pass let through, which the study's other collections follow. */
export class ImportedStudies {
  readonly keys = new Set<string>();
  /** Studies studyflow had of its own, left alone without --replace: their other collections are not read. */
  readonly refused = new Set<string>();
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

function localisedTexts(field: string, value: unknown): Record<string, string> {
  const list = asArray(value).map((item) => {
    const entry = asRecord(item);
    return {
      code: asString(entry["code"]),
      parts: asArray(entry["parts"]).map((part) => ({ str: asString(asRecord(part)["str"]) })),
    } satisfies CaseLocalisedText;
  });
  return Object.fromEntries(Object.entries(localisedToTexts(field, list)).filter(([, text]) => text.trim() !== ""));
}

/** An int64 date of CASE's study props (seconds; milliseconds from some clients) as YYYY-MM-DD. */
function calendarDate(value: unknown): string | undefined {
  const number = asNumber(value);
  if (number <= 0) return undefined;
  const ms = number < 100_000_000_000 ? number * 1000 : number;
  return new Date(ms).toISOString().slice(0, 10);
}

function studyPropsOf(props: Record<string, unknown>): StudyProps {
  const name = localisedTexts("props.name", props["name"]);
  const description = localisedTexts("props.description", props["description"]);
  const localisedTags = asArray(props["tags"])
    .map((tag, i) => localisedTexts(`props.tags[${i}].label`, asRecord(tag)["label"]))
    .filter((texts) => Object.keys(texts).length > 0);
  const tags = [
    ...new Set(localisedTags.map((texts) => (texts[PLAIN_TAG_LANGUAGE] ?? Object.values(texts)[0] ?? "").trim())),
  ];
  const startDate = calendarDate(props["startDate"]);
  return {
    ...(Object.keys(name).length > 0 ? { name } : {}),
    ...(Object.keys(description).length > 0 ? { description } : {}),
    ...(tags.length > 0 ? { tags, localisedTags } : {}),
    ...(startDate === undefined ? {} : { startDate }),
    ...(props["systemDefaultStudy"] === true ? { systemDefaultStudy: true } : {}),
  };
}

const isCaseMethod = (method: string): method is IdMappingMethod =>
  (CASE_ID_MAPPING_METHODS as readonly string[]).includes(method);

interface StudyPlan {
  row: typeof studies.$inferInsert;
  subscriptions: { messageType: string; email: string }[];
  kept: Record<string, unknown>;
}

function planStudy(document: CaseDocument): StudyPlan | string {
  const key = asString(document["key"]);
  if (key === "") return "the study has no key";
  if (!/^[^\s/?#]+$/.test(key) || key.length > 200) return `study key "${key}" cannot be a studyflow study key`;
  const status = asString(document["status"]);
  if (status !== "active" && status !== "inactive") return `status "${status}" is neither active nor inactive`;
  const secret = asString(document["secretKey"]);
  if (secret === "") return "the study has no secretKey: its participant ids could not be derived again";
  const configs = asRecord(document["configs"]);
  const method = asString(configs["idMappingMethod"]);
  if (!isCaseMethod(method)) return `configs.idMappingMethod "${method}" is none of case-backend's methods`;
  let props: StudyProps;
  try {
    props = studyPropsOf(asRecord(document["props"]));
  } catch (error) {
    return errorText(error);
  }
  const uploadRule = toPlain(configs["participantFileUploadRule"]);
  const config: StudyConfig = uploadRule === null ? {} : { participantFileUploadRule: uploadRule };
  const subscriptions = asArray(document["notificationSubscriptions"]).flatMap((entry) => {
    const subscription = asRecord(entry);
    const messageType = asString(subscription["messageType"]);
    const email = asString(subscription["email"]).trim().toLowerCase();
    return messageType !== "" && email !== "" ? [{ messageType, email }] : [];
  });
  const caseProps = asRecord(document["props"]);
  return {
    row: {
      key,
      status,
      secret,
      idMappingMethod: method,
      trackAccount: configs["trackAccount"] === true,
      config,
      props,
    },
    subscriptions,
    // not carried yet: kept with the import record for a later step
    kept: {
      id: documentId(document),
      endDate: toPlain(caseProps["endDate"]),
      stats: toPlain(document["studyStats"]),
      nextTimerEvent: toPlain(document["nextTimerEvent"]),
    },
  };
}

/** `study-infos`: the study rows, their researcher subscriptions, and the import record of each. */
export function studyInfosImporter(
  selected: string | undefined,
  replace: boolean,
  imported: ImportedStudies,
  ctx: ClockContext,
): CollectionImporter {
  return {
    absent: absentStudies,
    importBatch: async (tx, batch, write) => {
      const outcomes: DocumentOutcome[] = [];
      for (const { bytes, document } of batch) {
        // another study's problems are not this run's
        if (selected !== undefined && asString(document["key"]) !== selected) {
          outcomes.push(IGNORED);
          continue;
        }
        const plan = planStudy(document);
        if (typeof plan === "string") {
          outcomes.push(skipped(plan));
          continue;
        }
        const key = plan.row.key;
        const hash = contentHash(bytes);
        const [record] = await tx
          .select()
          .from(caseImportRecords)
          .where(and(eq(caseImportRecords.kind, "study"), eq(caseImportRecords.sourceId, key)));
        const [existing] = await tx
          .select({ key: studies.key, config: studies.config })
          .from(studies)
          .where(eq(studies.key, key));
        if (record?.contentHash === hash && existing) {
          imported.keys.add(key);
          outcomes.push(UNCHANGED);
          continue;
        }
        if (existing && !record && !replace) {
          imported.refused.add(key);
          outcomes.push(skipped(`studyflow already has a study "${key}" of its own; --replace overwrites it`));
          continue;
        }
        if (write) {
          const now = new Date(ctx.clock());
          if (existing) {
            await tx
              .update(studies)
              .set({ ...plan.row, config: { ...existing.config, ...plan.row.config }, updatedAt: now })
              .where(eq(studies.key, key));
          } else {
            await tx.insert(studies).values(plan.row);
          }
          if (plan.subscriptions.length > 0) {
            await tx
              .insert(researcherSubscriptions)
              .values(plan.subscriptions.map((entry) => ({ studyKey: key, ...entry, createdBy: IMPORT_ACTOR })))
              .onConflictDoNothing();
          }
          const recordRow = { targetId: key, contentHash: hash, kept: plan.kept, importedAt: now };
          await tx
            .insert(caseImportRecords)
            .values({ kind: "study", sourceId: key, ...recordRow })
            .onConflictDoUpdate({ target: [caseImportRecords.kind, caseImportRecords.sourceId], set: recordRow });
        }
        imported.keys.add(key);
        outcomes.push(existing ? UPDATED : INSERTED);
      }
      return outcomes;
    },
  };
}

/** The rules of a studyRules document: `rules`, or `serialisedRules` (JSON) as newer case-backends store them. */
function rulesOf(document: CaseDocument): unknown[] | string {
  const serialised = asString(document["serialisedRules"]);
  let rules: unknown;
  if (serialised !== "") {
    try {
      rules = JSON.parse(serialised);
    } catch (error) {
      return `serialisedRules is not JSON: ${errorText(error)}`;
    }
  } else {
    rules = toPlain(document["rules"]) ?? [];
  }
  const validation = validateRules(rules);
  if (!validation.ok) {
    const first = validation.errors[0];
    return `the rules do not validate (${validation.errors.length} problem(s)${first ? `, first: ${first.path}: ${first.message}` : ""})`;
  }
  return validation.rules;
}

/**
 * Which version each studyRules document becomes: per study, 1 for the oldest upload (by
 * uploadedAt, then id), so the newest is the highest version and thus the study's current rules.
 * Built from a first pass over the collection (`noteRulesDocument`), before the import pass.
 */
export class RuleVersionPlan {
  private readonly uploads = new Map<string, { id: string; uploadedAt: number }[]>();
  private versions?: Map<string, number>;

  note(document: CaseDocument): void {
    const studyKey = asString(document["studyKey"]);
    if (studyKey === "") return;
    const list = this.uploads.get(studyKey) ?? [];
    list.push({ id: documentId(document), uploadedAt: asNumber(document["uploadedAt"]) });
    this.uploads.set(studyKey, list);
  }

  versionOf(studyKey: string, id: string): number | undefined {
    if (!this.versions) {
      this.versions = new Map();
      for (const [key, list] of this.uploads) {
        list.sort((a, b) => a.uploadedAt - b.uploadedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        list.forEach((upload, i) => this.versions!.set(`${key}\u0000${upload.id}`, i + 1));
      }
    }
    return this.versions.get(`${studyKey}\u0000${id}`);
  }
}

/** `studyRules`: every version of each imported study's rules. */
export function studyRulesImporter(imported: ImportedStudies, plan: RuleVersionPlan): CollectionImporter {
  return {
    importBatch: async (tx, batch, write) => {
      const outcomes: DocumentOutcome[] = [];
      for (const { document } of batch) {
        const studyKey = asString(document["studyKey"]);
        if (!imported.keys.has(studyKey)) {
          outcomes.push(
            imported.refused.has(studyKey) || studyKey === ""
              ? skipped(studyKey === "" ? "the rules name no study" : `study "${studyKey}" was not imported`)
              : IGNORED,
          );
          continue;
        }
        const version = plan.versionOf(studyKey, documentId(document));
        const rules = rulesOf(document);
        if (version === undefined || typeof rules === "string") {
          outcomes.push(skipped(typeof rules === "string" ? rules : "the rules document has no id"));
          continue;
        }
        const row = {
          studyKey,
          version,
          rules,
          uploadedBy: asString(document["uploadedBy"]) || IMPORT_ACTOR,
          uploadedAt: unixSecondsDate(document["uploadedAt"]) ?? new Date(0),
        };
        const [existing] = await tx
          .select()
          .from(studyRules)
          .where(and(eq(studyRules.studyKey, studyKey), eq(studyRules.version, version)));
        if (
          existing &&
          canonicalJson(existing.rules) === canonicalJson(rules) &&
          existing.uploadedBy === row.uploadedBy &&
          existing.uploadedAt.getTime() === row.uploadedAt.getTime()
        ) {
          outcomes.push(UNCHANGED);
          continue;
        }
        if (write) {
          await tx
            .insert(studyRules)
            .values(row)
            .onConflictDoUpdate({
              target: [studyRules.studyKey, studyRules.version],
              set: { rules: row.rules, uploadedBy: row.uploadedBy, uploadedAt: row.uploadedAt },
            });
        }
        outcomes.push(existing ? UPDATED : INSERTED);
      }
      return outcomes;
    },
  };
}

/** Go's bson field names of a Survey that its JSON (what studyflow stores) spells otherwise. */
const SURVEY_JSON_NAMES = { _id: "id", versionID: "versionId", expression: "rule" } as const;

/** `<studyKey>_surveys`: every version, its published and unpublished times and version id unchanged. */
export function surveysImporter(studyKey: string): CollectionImporter {
  return {
    importBatch: async (tx, batch, write) => {
      const outcomes: DocumentOutcome[] = [];
      for (const { document } of batch) {
        const versionId = asString(document["versionID"]);
        if (versionId === "") {
          outcomes.push(skipped("the survey version has no versionID"));
          continue;
        }
        let upload;
        try {
          upload = readSurveyDefinition(toPlain(document, SURVEY_JSON_NAMES));
        } catch (error) {
          outcomes.push(skipped(errorText(error)));
          continue;
        }
        const row = {
          studyKey,
          surveyKey: upload.surveyKey,
          versionId,
          definition: upload.definition,
          publishedAt: unixSecondsDate(document["published"]) ?? new Date(0),
          publishedBy: IMPORT_ACTOR,
          unpublishedAt: unixSecondsDate(document["unpublished"]),
        };
        const [existing] = await tx
          .select()
          .from(surveyVersions)
          .where(
            and(
              eq(surveyVersions.studyKey, studyKey),
              eq(surveyVersions.surveyKey, row.surveyKey),
              eq(surveyVersions.versionId, versionId),
            ),
          );
        if (
          existing &&
          existing.publishedAt.getTime() === row.publishedAt.getTime() &&
          (existing.unpublishedAt?.getTime() ?? null) === (row.unpublishedAt?.getTime() ?? null) &&
          canonicalJson(existing.definition) === canonicalJson(row.definition)
        ) {
          outcomes.push(UNCHANGED);
          continue;
        }
        if (write) {
          await tx
            .insert(surveyVersions)
            .values(row)
            .onConflictDoUpdate({
              target: [surveyVersions.studyKey, surveyVersions.surveyKey, surveyVersions.versionId],
              set: { definition: row.definition, publishedAt: row.publishedAt, unpublishedAt: row.unpublishedAt },
            });
        }
        outcomes.push(existing ? UPDATED : INSERTED);
      }
      return outcomes;
    },
  };
}

/** A value of Go's map[string]string, which is text unless the document was written otherwise. */
const plainText = (value: Plain): string =>
  typeof value === "string"
    ? value
    : value === null
      ? ""
      : typeof value === "object"
        ? JSON.stringify(value)
        : `${value}`;

const stringMap = (value: unknown): Record<string, string> =>
  Object.fromEntries(Object.entries(asRecord(value)).map(([key, item]) => [key, plainText(toPlain(item))]));

function assignedSurveysOf(value: unknown): StoredAssignedSurvey[] {
  return asArray(value).map((item) => {
    const survey = asRecord(item);
    const studyKey = asString(survey["studyKey"]);
    const profileID = asString(survey["profileID"]);
    return {
      surveyKey: asString(survey["surveyKey"]),
      validFrom: asNumber(survey["validFrom"]),
      validUntil: asNumber(survey["validUntil"]),
      category: asString(survey["category"]),
      ...(studyKey === "" ? {} : { studyKey }),
      ...(profileID === "" ? {} : { profileID }),
    };
  });
}

function messagesOf(value: unknown): StoredParticipantMessage[] {
  return asArray(value).map((item) => {
    const message = asRecord(item);
    return {
      id: asString(message["id"]),
      type: asString(message["type"]),
      scheduledFor: asNumber(message["scheduledFor"]),
    };
  });
}

/** The participant row's state, as CASE's Participant document has it (bson names: lastSubmission, participantID). */
function participantRowOf(studyKey: string, document: CaseDocument) {
  const hashedAccountId = document["hashedAccountID"];
  const isMainProfile = document["isMainProfile"];
  return {
    studyKey,
    participantId: asString(document["participantID"]),
    currentStudySession: asString(document["currentStudySession"]),
    enteredAt: asNumber(document["enteredAt"]),
    modifiedAt: asNumber(document["modifiedAt"]),
    studyStatus: asString(document["studyStatus"]),
    flags: stringMap(document["flags"]),
    linkingCodes: stringMap(document["linkingCodes"]),
    assignedSurveys: assignedSurveysOf(document["assignedSurveys"]),
    lastSubmissions: Object.fromEntries(
      Object.entries(asRecord(document["lastSubmission"])).map(([key, time]) => [key, asNumber(time)]),
    ),
    messages: messagesOf(document["messages"]),
    hashedAccountId: typeof hashedAccountId === "string" ? hashedAccountId : null,
    isMainProfile: typeof isMainProfile === "boolean" ? isMainProfile : null,
  };
}

type ParticipantRow = ReturnType<typeof participantRowOf>;

const PARTICIPANT_COMPARED: readonly (keyof ParticipantRow)[] = [
  "currentStudySession",
  "enteredAt",
  "modifiedAt",
  "studyStatus",
  "flags",
  "linkingCodes",
  "assignedSurveys",
  "lastSubmissions",
  "messages",
  "hashedAccountId",
  "isMainProfile",
];

const participantContent = (row: Pick<ParticipantRow, (typeof PARTICIPANT_COMPARED)[number]>) =>
  canonicalJson(PARTICIPANT_COMPARED.map((field) => row[field]));

/**
 * `<studyKey>_participants`: every participant with the id it has in CASE, whatever its status
 * (active, temporary, virtual, exited, accountDeleted), and its scheduled messages' due times.
 */
export function participantsImporter(studyKey: string): CollectionImporter {
  return {
    importBatch: async (tx, batch: readonly BatchDocument[], write) => {
      const outcomes: (DocumentOutcome | undefined)[] = batch.map(() => undefined);
      const rows = new Map<string, { at: number; row: ParticipantRow }>();
      batch.forEach(({ document }, at) => {
        const row = participantRowOf(studyKey, document);
        if (row.participantId === "") outcomes[at] = skipped("the participant has no participantID");
        else if (row.studyStatus === "") outcomes[at] = skipped("the participant has no studyStatus");
        else {
          const earlier = rows.get(row.participantId);
          if (earlier) outcomes[earlier.at] = skipped(`participantID ${row.participantId} appears again later`);
          rows.set(row.participantId, { at, row });
        }
      });
      if (rows.size === 0) return outcomes.map((outcome) => outcome ?? IGNORED);
      const existing = await tx
        .select()
        .from(participants)
        .where(and(eq(participants.studyKey, studyKey), inArray(participants.participantId, [...rows.keys()])));
      const before = new Map(existing.map((row) => [row.participantId, row]));
      const writes: (ParticipantRow & { id: string })[] = [];
      for (const { at, row } of rows.values()) {
        const had = before.get(row.participantId);
        if (had && participantContent(had) === participantContent(row)) outcomes[at] = UNCHANGED;
        else {
          outcomes[at] = had ? UPDATED : INSERTED;
          // a new row's id from CASE's _id, so that every import of the same dump gives the same rows
          const sourceId = documentId(batch[at]!.document);
          writes.push({ ...row, id: isObjectIdHex(sourceId) ? caseAccountUuid(sourceId) : randomUUID() });
        }
      }
      if (write && writes.length > 0) {
        // participants studyflow does not have yet go in with COPY, the others as an upsert
        await copyRows(
          tx,
          participants,
          writes.filter((row) => !before.has(row.participantId)),
        );
        const changed = writes.filter((row) => before.has(row.participantId));
        if (changed.length > 0) {
          await tx
            .insert(participants)
            .values(changed)
            .onConflictDoUpdate({
              target: [participants.studyKey, participants.participantId],
              set: {
                currentStudySession: sql`excluded.current_study_session`,
                enteredAt: sql`excluded.entered_at`,
                modifiedAt: sql`excluded.modified_at`,
                studyStatus: sql`excluded.study_status`,
                flags: sql`excluded.flags`,
                linkingCodes: sql`excluded.linking_codes`,
                assignedSurveys: sql`excluded.assigned_surveys`,
                lastSubmissions: sql`excluded.last_submissions`,
                messages: sql`excluded.messages`,
                hashedAccountId: sql`excluded.hashed_account_id`,
                isMainProfile: sql`excluded.is_main_profile`,
                version: sql`${participants.version} + 1`,
              },
            });
        }
        await syncMessageSchedule(
          tx,
          writes.map((row) => ({
            studyKey,
            participantId: row.participantId,
            before: before.get(row.participantId)?.messages ?? [],
            after: row.messages,
          })),
        );
      }
      return outcomes.map((outcome) => outcome ?? IGNORED);
    },
  };
}
