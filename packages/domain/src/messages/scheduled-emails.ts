import { and, asc, eq, isNotNull, isNull, lte, sql } from "drizzle-orm";
import {
  confidentialIdMap,
  outgoingMessages,
  profiles,
  scheduledEmails,
  studies,
  users,
  type EmailHeaderOverrides,
  type Executor,
  type ScheduledEmailTemplate,
  type ScheduledEmailType,
} from "@studyflow/db";
import { createAccountToken } from "../participant-accounts/account-tokens";
import { recordAudit } from "../foundation/audit";
import type { ClockContext } from "../foundation/clock";
import { Invalid, NotFound } from "../errors";
import {
  checkTemplateTranslations,
  decodeTemplateDef,
  isStoredId,
  sanitizeMessageType,
  readsLoginToken,
  storedHeaderOverrides,
  templateTranslationFor,
  TEMPLATE_LOGIN_TOKEN_TTL_SECONDS,
  type CaseEmailTemplate,
  type CaseEmailTemplateInput,
} from "./case-email-templates";
import { GoTemplateError, executeGoTemplate, parseGoTemplate, type GoTemplate } from "@studyflow/go-template";

/**
 * case-admin's scheduled e-mails (case-backend's messaging service and its scheduled-messages
 * job): a template sent at `nextTime` (Unix seconds), then every `period` seconds until `until`
 * (0: no end), to every subscribed account whose weekly day is today (`all-users`) or to those of
 * them that take part in a study (`study-participants`).
 */
export interface CaseScheduledEmail {
  id: string;
  template: CaseEmailTemplate;
  type: ScheduledEmailType;
  /** The study of a study-participants schedule; "" otherwise, as case-backend answers it. */
  studyKey: string;
  condition: Record<string, unknown> | null;
  nextTime: number;
  period: number;
  label: string;
  until: number;
}

export interface CaseScheduledEmailInput {
  id?: string | undefined;
  template: CaseEmailTemplateInput;
  type: ScheduledEmailType;
  studyKey?: string | undefined;
  condition?: Record<string, unknown> | null | undefined;
  nextTime: number;
  period: number;
  label?: string | undefined;
  until?: number | null | undefined;
}

type ScheduledEmailRow = typeof scheduledEmails.$inferSelect;

export function presentScheduledEmail(row: ScheduledEmailRow): CaseScheduledEmail {
  return {
    id: row.id,
    template: {
      id: "",
      messageType: row.template.messageType,
      studyKey: row.studyKey ?? "",
      defaultLanguage: row.template.defaultLanguage,
      headerOverrides: row.template.headerOverrides ?? null,
      translations: row.template.translations,
    },
    type: row.type,
    studyKey: row.studyKey ?? "",
    condition: (row.condition as Record<string, unknown> | null) ?? null,
    nextTime: row.nextTime,
    period: row.period,
    label: row.label,
    until: row.until,
  };
}

export async function listScheduledEmails(db: Executor): Promise<CaseScheduledEmail[]> {
  const rows = await db.select().from(scheduledEmails).orderBy(asc(scheduledEmails.nextTime), asc(scheduledEmails.id));
  return rows.map(presentScheduledEmail);
}

export async function readScheduledEmail(db: Executor, id: string): Promise<CaseScheduledEmail> {
  const [row] = isStoredId(id) ? await db.select().from(scheduledEmails).where(eq(scheduledEmails.id, id)) : [];
  if (!row) throw new NotFound(`scheduled e-mail "${id}" not found`);
  return presentScheduledEmail(row);
}

/**
 * Saves a schedule as case-backend does (without `id` a new one, with `id` a replacement; 404 if
 * unknown): the template checked like any e-mail template; `until`, when set, not in the past and
 * not before `nextTime` (case-backend's texts). studyflow also needs a positive `period` (case-
 * backend's job would loop forever on 0), a known study for `study-participants`, and no
 * `condition` (not evaluated by studyflow yet: refused rather than ignored). Audited.
 */
export async function saveScheduledEmail(
  db: Executor,
  input: CaseScheduledEmailInput,
  actor: string,
  ctx: ClockContext,
): Promise<CaseScheduledEmail> {
  const messageType = sanitizeMessageType(input.template.messageType);
  checkTemplateTranslations(input.template.translations, "template.translations");
  const until = input.until ?? 0;
  if (until > 0) {
    if (until < Math.floor(ctx.clock() / 1000))
      throw new Invalid("until: invalid termination date of auto message schedule, is in past");
    if (until < input.nextTime) {
      throw new Invalid("until: invalid termination date of auto message schedule, earlier than start date");
    }
  }
  if (input.period <= 0) throw new Invalid("period: must be a positive number of seconds");
  if (input.condition && Object.keys(input.condition).length > 0) {
    throw new Invalid("condition: participant conditions on scheduled e-mails are not supported by studyflow");
  }
  const studyKey = input.type === "study-participants" ? (input.studyKey ?? "").trim() : "";
  if (input.type === "study-participants" && studyKey === "") {
    throw new Invalid("studyKey: required for a study-participants schedule");
  }
  const template: ScheduledEmailTemplate = {
    messageType,
    defaultLanguage: input.template.defaultLanguage ?? "",
    headerOverrides: storedHeaderOverrides(input.template.headerOverrides),
    translations: (input.template.translations ?? []).map((translation) => ({
      lang: translation.lang,
      subject: translation.subject ?? "",
      templateDef: translation.templateDef,
    })),
  };
  const values = {
    type: input.type,
    studyKey: studyKey === "" ? null : studyKey,
    label: input.label ?? "",
    template,
    condition: null,
    nextTime: input.nextTime,
    period: input.period,
    until,
    createdBy: actor,
    updatedAt: new Date(ctx.clock()),
  };
  const id = input.id ?? "";
  return db.transaction(async (tx) => {
    if (values.studyKey !== null) {
      const [study] = await tx
        .select({ key: studies.key })
        .from(studies)
        .where(eq(studies.key, values.studyKey))
        .limit(1);
      if (!study) throw new NotFound(`study "${values.studyKey}" not found`);
    }
    let row: ScheduledEmailRow | undefined;
    if (id === "") {
      [row] = await tx.insert(scheduledEmails).values(values).returning();
    } else {
      if (!isStoredId(id)) throw new NotFound(`scheduled e-mail "${id}" not found`);
      const { createdBy: _keep, ...changes } = values;
      [row] = await tx.update(scheduledEmails).set(changes).where(eq(scheduledEmails.id, id)).returning();
      if (!row) throw new NotFound(`scheduled e-mail "${id}" not found`);
    }
    if (!row) throw new Error("scheduled e-mail save returned nothing");
    await recordAudit(tx, {
      studyKey: row.studyKey,
      actor,
      action: "scheduled-email.save",
      target: row.id,
      details: {
        created: id === "",
        type: row.type,
        messageType,
        label: row.label,
        nextTime: row.nextTime,
        period: row.period,
        until: row.until,
      },
    });
    return presentScheduledEmail(row);
  });
}

/** Deletes a schedule; answers the same whether or not it existed (case-backend). Audited when one went. */
export async function deleteScheduledEmail(db: Executor, id: string, actor: string): Promise<boolean> {
  if (!isStoredId(id)) return false;
  return db.transaction(async (tx) => {
    const [removed] = await tx.delete(scheduledEmails).where(eq(scheduledEmails.id, id)).returning();
    if (!removed) return false;
    await recordAudit(tx, {
      studyKey: removed.studyKey,
      actor,
      action: "scheduled-email.delete",
      target: id,
      details: { type: removed.type, messageType: removed.template.messageType, label: removed.label },
    });
    return true;
  });
}

/**
 * How long the unsubscribe link of a scheduled newsletter works. The link only unsubscribes (no
 * sign-in, nothing read), and a newsletter is read days or weeks after it arrives: a quarter keeps
 * an old newsletter's link working without keeping tokens forever.
 */
export const NEWSLETTER_UNSUBSCRIBE_TOKEN_TTL_SECONDS = 90 * 86_400;

/** Whether any translation of a schedule's template reads `.loginToken`. */
function anyReadsLoginToken(template: ScheduledEmailTemplate): boolean {
  return template.translations.some((translation) => readsLoginToken(decodeTemplateDef(translation.templateDef) ?? ""));
}

/** The outbox template name of a scheduled e-mail: its payload holds the rendered mail. */
export const SCHEDULED_EMAIL_TEMPLATE = "case-scheduled-email";

/** What a scheduled e-mail's outbox row carries: the mail as rendered when it was queued. */
export interface ScheduledEmailPayload {
  scheduleId: string;
  messageType: string;
  subject: string;
  html: string;
  /** The template's stored `headerOverrides`, applied when the row is delivered. */
  headerOverrides?: EmailHeaderOverrides | null;
}

/** The next slot after a firing: `period` on, skipping slots already past (case-backend's loop). */
export function nextSlot(nextTime: number, period: number, nowSeconds: number): number {
  const next = nextTime + period;
  if (next >= nowSeconds) return next;
  return next + Math.ceil((nowSeconds - next) / period) * period;
}

/**
 * The mail of one recipient: the template's translation in their language rendered with the
 * values case-backend gives a scheduled e-mail that studyflow has (language, study key, message
 * type; the recipient's `unsubscribeToken` in a newsletter, else their `loginToken` when the
 * template reads it) and nothing else of the account.
 */
export function renderScheduledEmail(
  schedule: Pick<ScheduledEmailRow, "id" | "studyKey" | "template">,
  language: string,
  recipientValues: { unsubscribeToken?: string; loginToken?: string } = {},
  parsed: Map<string, GoTemplate> = new Map(),
): ScheduledEmailPayload | null {
  const translation = templateTranslationFor(schedule.template, language);
  if (!translation) return null;
  let template = parsed.get(translation.templateDef);
  if (!template) {
    const source = decodeTemplateDef(translation.templateDef);
    if (source === null) return null;
    template = parseGoTemplate(source);
    parsed.set(translation.templateDef, template);
  }
  const data = {
    language: translation.lang,
    studyKey: schedule.studyKey ?? "",
    messageType: schedule.template.messageType,
    ...recipientValues,
  };
  return {
    scheduleId: schedule.id,
    messageType: schedule.template.messageType,
    subject: translation.subject,
    html: executeGoTemplate(template, data),
    ...(schedule.template.headerOverrides ? { headerOverrides: schedule.template.headerOverrides } : {}),
  };
}

/**
 * Renders a recipient's mail, or says why its template failed (GoTemplateError: a limit on the
 * work a rendering may do, reached with the data of the send rather than the empty map of the
 * check on save). A translation that failed once fails every recipient the same way without
 * being run again: the recipients' values differ only in a token of fixed length, and running a
 * template to its limit for each of thousands of readers would hold the worker for minutes.
 */
function renderForRecipient(
  schedule: ScheduledEmailRow,
  language: string,
  recipientValues: { unsubscribeToken?: string; loginToken?: string },
  cache: { parsed: Map<string, GoTemplate>; failed: Map<string, string> },
): ScheduledEmailPayload | { failure: string } | null {
  const translation = templateTranslationFor(schedule.template, language);
  if (!translation) return null;
  const known = cache.failed.get(translation.templateDef);
  if (known !== undefined) return { failure: known };
  try {
    return renderScheduledEmail(schedule, language, recipientValues, cache.parsed);
  } catch (error) {
    if (!(error instanceof GoTemplateError)) throw error;
    const failure = `template (lang "${translation.lang}") could not be rendered: ${error.message}`;
    cache.failed.set(translation.templateDef, failure);
    return { failure };
  }
}

/**
 * The accounts a firing goes to (case-backend's filter): confirmed, not locked or being deleted,
 * whose weekly day is today (UTC), subscribed where the type asks (weekly → weekly messages,
 * newsletter → newsletter; other types always), and for study-participants a profile in the study.
 */
async function recipientsOf(tx: Executor, schedule: ScheduledEmailRow, now: Date) {
  const conditions = [
    isNotNull(users.accountConfirmedAt),
    isNull(users.lockedAt),
    isNull(users.deletionRequestedAt),
    eq(users.weeklyMessageDayOfWeek, now.getUTCDay()),
  ];
  if (schedule.template.messageType === "weekly") conditions.push(eq(users.subscribedToWeekly, true));
  if (schedule.template.messageType === "newsletter") conditions.push(eq(users.subscribedToNewsletter, true));
  if (schedule.type === "study-participants") {
    if (schedule.studyKey === null) return [];
    const inStudy = tx
      .select({ userId: profiles.userId })
      .from(confidentialIdMap)
      .innerJoin(profiles, eq(profiles.id, confidentialIdMap.profileId))
      .where(eq(confidentialIdMap.studyKey, schedule.studyKey));
    conditions.push(sql`${users.id} in ${inStudy}`);
  }
  return tx
    .select({ id: users.id, language: users.preferredLanguage })
    .from(users)
    .where(and(...conditions));
}

export interface ScheduledEmailsRound {
  /** Schedules fired this round. */
  fired: number;
  /** Outbox rows queued. */
  queued: number;
  /** Schedules deleted because their end had come. */
  ended: number;
}

/**
 * The outbox row of a recipient whose mail could not be rendered: failed at once with the
 * reason, for the operator reading the outbox; no body, so nothing of a token either.
 */
function failedScheduledEmail(
  schedule: ScheduledEmailRow,
  userId: string,
  reason: string,
): typeof outgoingMessages.$inferInsert {
  return {
    template: SCHEDULED_EMAIL_TEMPLATE,
    userId,
    studyKey: schedule.studyKey,
    payload: { scheduleId: schedule.id, messageType: schedule.template.messageType },
    status: "failed",
    lastError: `scheduled e-mail not sent: ${reason}`,
  };
}

/**
 * Fires every due schedule (`nextTime <= now`), one transaction each: the schedule row is locked
 * (others skip it), its mails go into the outbox, and its `nextTime` moves to the next slot (or
 * the schedule is deleted past `until`) in that same transaction, so a slot fires once however
 * many workers run this. Stops after `maxSchedules`.
 */
export async function fireDueScheduledEmails(
  db: Executor,
  now: Date,
  maxSchedules = 100,
): Promise<ScheduledEmailsRound> {
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const round: ScheduledEmailsRound = { fired: 0, queued: 0, ended: 0 };
  for (let index = 0; index < maxSchedules; index++) {
    const fired = await db.transaction(async (tx) => {
      const [schedule] = await tx
        .select()
        .from(scheduledEmails)
        .where(lte(scheduledEmails.nextTime, nowSeconds))
        .orderBy(asc(scheduledEmails.nextTime))
        .for("update", { skipLocked: true })
        .limit(1);
      if (!schedule) return false;
      const rows: (typeof outgoingMessages.$inferInsert)[] = [];
      const newsletter = schedule.template.messageType === "newsletter";
      const withLoginToken = !newsletter && anyReadsLoginToken(schedule.template);
      const cache = { parsed: new Map<string, GoTemplate>(), failed: new Map<string, string>() };
      for (const recipient of await recipientsOf(tx, schedule, now)) {
        const translation = templateTranslationFor(schedule.template, recipient.language);
        const failedBefore = translation && cache.failed.get(translation.templateDef);
        if (failedBefore) {
          // no token for a mail that will not be sent
          rows.push(failedScheduledEmail(schedule, recipient.id, failedBefore));
          continue;
        }
        // As case-backend: a newsletter carries its reader's unsubscribe token (POST
        // /v1/unsubscribe-newsletter), another mail a survey-login token for the study. Issued in
        // this transaction, a token exists exactly when its mail is queued.
        const recipientValues: { unsubscribeToken?: string; loginToken?: string } = {};
        if (newsletter) {
          recipientValues.unsubscribeToken = await createAccountToken(tx, {
            userId: recipient.id,
            purpose: "unsubscribe-newsletter",
            ttlSeconds: NEWSLETTER_UNSUBSCRIBE_TOKEN_TTL_SECONDS,
            now,
          });
        } else if (withLoginToken) {
          recipientValues.loginToken = await createAccountToken(tx, {
            userId: recipient.id,
            purpose: "survey-login",
            ttlSeconds: TEMPLATE_LOGIN_TOKEN_TTL_SECONDS,
            now,
            info: schedule.studyKey === null ? {} : { studyKey: schedule.studyKey },
          });
        }
        const payload = renderForRecipient(schedule, recipient.language, recipientValues, cache);
        if (!payload) continue;
        if ("failure" in payload) {
          rows.push(failedScheduledEmail(schedule, recipient.id, payload.failure));
          continue;
        }
        rows.push({
          template: SCHEDULED_EMAIL_TEMPLATE,
          userId: recipient.id,
          studyKey: schedule.studyKey,
          payload: { ...payload },
        });
      }
      for (let start = 0; start < rows.length; start += 500) {
        await tx.insert(outgoingMessages).values(rows.slice(start, start + 500));
      }
      const next = nextSlot(schedule.nextTime, schedule.period, nowSeconds);
      if (schedule.until > 0 && schedule.until < next) {
        await tx.delete(scheduledEmails).where(eq(scheduledEmails.id, schedule.id));
        round.ended++;
      } else {
        await tx.update(scheduledEmails).set({ nextTime: next }).where(eq(scheduledEmails.id, schedule.id));
      }
      round.queued += rows.length;
      return true;
    });
    if (!fired) break;
    round.fired++;
  }
  return round;
}
