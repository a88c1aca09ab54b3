import { and, desc, eq, gt, lt, sql } from "drizzle-orm";
import type { EngineServices, OldResponsesQuery, StudyVariable, SurveyResponse } from "@studyflow/engine";
import { studyCodeLists, studyCounters, studyVariables, surveyResponses, type Executor } from "@studyflow/db";
import { SEND_MESSAGE_NOW_VALIDITY_MS, messageRefusalFor } from "./message-refusal";

/** Calls an external service of the study's configuration; absent means none are configured. */
export type ExternalServiceCaller = (serviceName: string, route: string, body: unknown) => Promise<unknown>;

export const noExternalServices: ExternalServiceCaller = (serviceName) =>
  Promise.reject(new Error(`external service "${serviceName}" is not configured`));

/**
 * The engine's database ports for one study, running inside the caller's transaction: a rule's
 * counter increment or code draw commits or rolls back with the event that caused it. `clock`
 * (milliseconds) is the event's, from which a refused message's expiry is counted and a rule's
 * variable update is stamped.
 */
export function createPostgresEngineServices(
  tx: Executor,
  studyKey: string,
  clock: () => number,
  callExternalService: ExternalServiceCaller = noExternalServices,
): EngineServices {
  const codeEntry = (listKey: string, code: string) =>
    and(eq(studyCodeLists.studyKey, studyKey), eq(studyCodeLists.listKey, listKey), eq(studyCodeLists.code, code));
  return {
    async getCounterValue(scope) {
      const [row] = await tx
        .select({ value: studyCounters.value })
        .from(studyCounters)
        .where(and(eq(studyCounters.studyKey, studyKey), eq(studyCounters.scope, scope)));
      return row?.value ?? 0;
    },

    async incrementCounter(scope) {
      const [row] = await tx
        .insert(studyCounters)
        .values({ studyKey, scope, value: 1 })
        .onConflictDoUpdate({
          target: [studyCounters.studyKey, studyCounters.scope],
          set: { value: sql`${studyCounters.value} + 1` },
        })
        .returning({ value: studyCounters.value });
      if (!row) throw new Error("counter increment returned nothing");
      return row.value;
    },

    async resetCounter(scope) {
      await tx.delete(studyCounters).where(and(eq(studyCounters.studyKey, studyKey), eq(studyCounters.scope, scope)));
    },

    async isCodePresent(listKey, code) {
      const [row] = await tx
        .select({ id: studyCodeLists.id })
        .from(studyCodeLists)
        .where(codeEntry(listKey, code))
        .limit(1);
      return row !== undefined;
    },

    async drawCode(listKey) {
      // SKIP LOCKED: two events drawing at once get different codes instead of waiting on each other.
      const rows = await tx.execute<{ code: string }>(sql`
        delete from ${studyCodeLists}
        where ${studyCodeLists.id} = (
          select ${studyCodeLists.id} from ${studyCodeLists}
          where ${studyCodeLists.studyKey} = ${studyKey} and ${studyCodeLists.listKey} = ${listKey}
          order by ${studyCodeLists.id}
          limit 1
          for update skip locked
        )
        returning ${studyCodeLists.code} as code`);
      return rows[0]?.code ?? null;
    },

    async removeCode(listKey, code) {
      await tx.delete(studyCodeLists).where(codeEntry(listKey, code));
    },

    async getStudyVariable(key) {
      const [row] = await tx
        .select({ key: studyVariables.key, type: studyVariables.type, value: studyVariables.value })
        .from(studyVariables)
        .where(and(eq(studyVariables.studyKey, studyKey), eq(studyVariables.key, key)));
      if (!row) return null;
      return { key: row.key, type: row.type, value: row.value as StudyVariable["value"] };
    },

    async updateStudyVariable(key, type, value) {
      const [row] = await tx
        .select({ type: studyVariables.type })
        .from(studyVariables)
        .where(and(eq(studyVariables.studyKey, studyKey), eq(studyVariables.key, key)))
        .for("update");
      if (!row) throw new Error(`study variable "${key}" does not exist`);
      if (row.type !== type) throw new Error(`study variable "${key}" has type ${row.type}, not ${type}`);
      await tx
        .update(studyVariables)
        .set({ value, valueUpdatedAt: new Date(clock()) })
        .where(and(eq(studyVariables.studyKey, studyKey), eq(studyVariables.key, key)));
    },

    async findOldResponses(query: OldResponsesQuery): Promise<SurveyResponse[]> {
      const conditions = [
        eq(surveyResponses.studyKey, studyKey),
        eq(surveyResponses.participantId, query.participantId),
      ];
      if (query.surveyKey) conditions.push(eq(surveyResponses.key, query.surveyKey));
      if (query.since !== undefined && query.since > 0) conditions.push(gt(surveyResponses.arrivedAt, query.since));
      if (query.until !== undefined && query.until > 0) conditions.push(lt(surveyResponses.arrivedAt, query.until));
      const rows = await tx
        .select()
        .from(surveyResponses)
        .where(and(...conditions))
        .orderBy(desc(surveyResponses.arrivedAt))
        .limit(query.limit);
      return rows.map((row) => ({
        id: row.id,
        key: row.key,
        participantId: row.participantId,
        versionId: row.versionId,
        openedAt: row.openedAt,
        submittedAt: row.submittedAt,
        arrivedAt: row.arrivedAt,
        responses: row.responses as SurveyResponse["responses"],
        context: row.context,
      }));
    },

    callExternalService,

    refuseMessage: messageRefusalFor(tx, studyKey, clock, SEND_MESSAGE_NOW_VALIDITY_MS),
  };
}
