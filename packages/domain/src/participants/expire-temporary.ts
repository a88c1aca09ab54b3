import { and, eq, inArray, lt } from "drizzle-orm";
import { confidentialResponses, participants, studies, type Database } from "@studyflow/db";
import { confidentialIdInStudy } from "./participant-ids";

/** Temporary participants removed per call: one short transaction, called again while it finds more. */
const EXPIRY_BATCH = 500;

/**
 * Removes temporary participants that entered before `cutoffSeconds` (long past the age at which
 * they could still be merged), with their confidential responses: nobody can claim them any more,
 * and confidential answers without an owner only carry risk. Their survey responses and reports
 * stay: anonymous answers are study data. Returns how many were removed.
 */
export async function expireTemporaryParticipants(db: Database, cutoffSeconds: number): Promise<number> {
  return db.transaction(async (tx) => {
    const expired = await tx
      .select({
        id: participants.id,
        studyKey: participants.studyKey,
        participantId: participants.participantId,
        secret: studies.secret,
        idMappingMethod: studies.idMappingMethod,
      })
      .from(participants)
      .innerJoin(studies, eq(studies.key, participants.studyKey))
      .where(and(eq(participants.studyStatus, "temporary"), lt(participants.enteredAt, cutoffSeconds)))
      .limit(EXPIRY_BATCH)
      .for("update", { of: participants, skipLocked: true });
    if (expired.length === 0) return 0;
    const byStudy = new Map<string, typeof expired>();
    for (const row of expired) byStudy.set(row.studyKey, [...(byStudy.get(row.studyKey) ?? []), row]);
    for (const [studyKey, rows] of byStudy) {
      await tx.delete(confidentialResponses).where(
        and(
          eq(confidentialResponses.studyKey, studyKey),
          inArray(
            confidentialResponses.confidentialId,
            rows.map((row) => confidentialIdInStudy({ ...row, key: studyKey }, row.participantId)),
          ),
        ),
      );
    }
    await tx.delete(participants).where(
      inArray(
        participants.id,
        expired.map((row) => row.id),
      ),
    );
    return expired.length;
  });
}
