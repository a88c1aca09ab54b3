import { eq } from "drizzle-orm";
import { smsTemplates, type Executor, type SmsTemplateTranslation } from "@studyflow/db";
import type { ClockContext } from "../foundation/clock";
import { recordAudit } from "../foundation/audit";
import { Conflict, Invalid, NotFound } from "../errors";
import { checkTemplateTranslations, isStoredId } from "./case-email-templates";

/**
 * case-admin's SMS templates, one per message type. studyflow sends no SMS: they are stored and
 * answered for case-admin only, checked on save as case-backend checks them.
 */
export interface CaseSmsTemplate {
  id: string;
  messageType: string;
  defaultLanguage: string;
  from: string;
  translations: SmsTemplateTranslation[];
}

export interface CaseSmsTemplateInput {
  id?: string | undefined;
  messageType: string;
  defaultLanguage?: string | undefined;
  from?: string | undefined;
  translations?: readonly { lang: string; templateDef: string }[] | null | undefined;
}

type SmsTemplateRow = typeof smsTemplates.$inferSelect;

export function presentSmsTemplate(row: SmsTemplateRow): CaseSmsTemplate {
  return {
    id: row.id,
    messageType: row.messageType,
    defaultLanguage: row.defaultLanguage,
    from: row.fromName,
    translations: row.translations,
  };
}

/** The template of a type; case-backend answers a missing one with an empty template. */
export async function readSmsTemplate(db: Executor, messageType: string): Promise<CaseSmsTemplate> {
  const [row] = await db.select().from(smsTemplates).where(eq(smsTemplates.messageType, messageType)).limit(1);
  return row ? presentSmsTemplate(row) : { id: "", messageType, defaultLanguage: "", from: "", translations: [] };
}

/**
 * Saves an SMS template as case-backend does: without `id` a new one (409 when the type has one),
 * with `id` a replacement of it (404 if unknown). The message type is kept as sent (case-backend
 * does not sanitise SMS types) but must not be empty. Audited `sms-template.save`.
 */
export async function saveSmsTemplate(
  db: Executor,
  input: CaseSmsTemplateInput,
  actor: string,
  ctx: ClockContext,
): Promise<CaseSmsTemplate> {
  const messageType = input.messageType.trim();
  if (messageType === "") throw new Invalid("messageType: must not be empty");
  checkTemplateTranslations(input.translations);
  const values = {
    messageType,
    defaultLanguage: input.defaultLanguage ?? "",
    fromName: input.from ?? "",
    translations: (input.translations ?? []).map(({ lang, templateDef }) => ({ lang, templateDef })),
    updatedBy: actor,
    updatedAt: new Date(ctx.clock()),
  };
  const id = input.id ?? "";
  return db.transaction(async (tx) => {
    let row: SmsTemplateRow | undefined;
    let created = true;
    if (id === "") {
      [row] = await tx.insert(smsTemplates).values(values).onConflictDoNothing().returning();
      if (!row)
        throw new Conflict(`an SMS template of type "${messageType}" exists already; send its id to replace it`);
    } else {
      if (!isStoredId(id)) throw new NotFound(`SMS template "${id}" not found`);
      const [other] = await tx
        .select({ id: smsTemplates.id })
        .from(smsTemplates)
        .where(eq(smsTemplates.messageType, messageType))
        .limit(1);
      if (other && other.id !== id) throw new Conflict(`another SMS template of type "${messageType}" exists`);
      [row] = await tx.update(smsTemplates).set(values).where(eq(smsTemplates.id, id)).returning();
      if (!row) throw new NotFound(`SMS template "${id}" not found`);
      created = false;
    }
    await recordAudit(tx, {
      studyKey: null,
      actor,
      action: "sms-template.save",
      target: messageType,
      details: { id: row.id, messageType, created, languages: values.translations.map((t) => t.lang) },
    });
    return presentSmsTemplate(row);
  });
}
