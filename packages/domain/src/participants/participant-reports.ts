import { and, eq, sql } from "drizzle-orm";
import { reports, type Database, type StoredReportData } from "@studyflow/db";
import { recordAudit } from "../foundation/audit";
import { Invalid, NotFound } from "../errors";
import { getStudy } from "../studies/study-repository";
import { lockParticipant } from "./participant-repository";

export type ReportRecord = typeof reports.$inferSelect;

/** eventType of a report a researcher wrote, not an event's rules. */
export const RESEARCHER_REPORT_EVENT = "MANAGEMENT";

const ROW_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface NewParticipantReport {
  studyKey: string;
  participantId: string;
  key: string;
  responseId?: string | undefined;
  timestamp: number;
  data: StoredReportData[];
  actor: string;
}

/**
 * Stores a report a researcher writes for a participant (case-backend's submit report): the
 * participant must exist (NotFound) and still have an account (Invalid, as case-backend answers
 * 400). A responseId that names no stored response's id form is kept out of the row. Audited
 * (`report.create`).
 */
export async function submitParticipantReport(
  db: Database,
  input: NewParticipantReport,
  at: Date,
): Promise<ReportRecord> {
  return db.transaction(async (tx) => {
    await getStudy(tx, input.studyKey);
    const participant = await lockParticipant(tx, input.studyKey, input.participantId);
    if (!participant) {
      throw new NotFound(`participant "${input.participantId}" not found in study "${input.studyKey}"`);
    }
    if (participant.studyStatus === "accountDeleted") throw new Invalid("participant account deleted");
    const [row] = await tx
      .insert(reports)
      .values({
        studyKey: input.studyKey,
        participantId: input.participantId,
        key: input.key,
        responseId: input.responseId && ROW_ID.test(input.responseId) ? input.responseId : null,
        eventType: RESEARCHER_REPORT_EVENT,
        timestamp: input.timestamp,
        data: input.data,
      })
      .returning();
    await recordAudit(
      tx,
      {
        studyKey: input.studyKey,
        actor: input.actor,
        action: "report.create",
        target: row!.id,
        details: { key: input.key },
      },
      at,
    );
    return row!;
  });
}

export interface ReportDataUpdate {
  studyKey: string;
  participantId: string;
  reportId: string;
  data: StoredReportData[];
  /** append: the entries join the report's data; replace: they become its data. */
  mode: "append" | "replace";
  actor: string;
}

/**
 * Appends to or replaces a participant's report data (case-backend's update report). A report id
 * that is not this participant's report in this study is a NotFound. Audited (`report.update`).
 */
export async function updateParticipantReport(db: Database, input: ReportDataUpdate, at: Date): Promise<ReportRecord> {
  return db.transaction(async (tx) => {
    await getStudy(tx, input.studyKey);
    const data = JSON.stringify(input.data);
    const [row] = ROW_ID.test(input.reportId)
      ? await tx
          .update(reports)
          .set({
            data: input.mode === "append" ? sql`${reports.data} || ${data}::text::jsonb` : sql`${data}::text::jsonb`,
          })
          .where(
            and(
              eq(reports.studyKey, input.studyKey),
              eq(reports.participantId, input.participantId),
              eq(reports.id, input.reportId),
            ),
          )
          .returning()
      : [];
    if (!row) {
      throw new NotFound(
        `report "${input.reportId}" of participant "${input.participantId}" not found in study "${input.studyKey}"`,
      );
    }
    await recordAudit(
      tx,
      {
        studyKey: input.studyKey,
        actor: input.actor,
        action: "report.update",
        target: row.id,
        details: { mode: input.mode, entries: input.data.length },
      },
      at,
    );
    return row;
  });
}
