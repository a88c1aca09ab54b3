import { eq } from "drizzle-orm";
import { evaluateExpression, validateExpression, type Expression } from "@studyflow/engine";
import { studies, type Executor, type StudyConfig } from "@studyflow/db";
import type { ClockContext } from "../foundation/clock";
import { recordAudit } from "../foundation/audit";
import { forgetCached } from "../cache/read-cache";
import { NotFound } from "../errors";
import { invalidRulesError } from "../rules/rule-issues";
import { engineEnvFor, type DomainContext } from "../events/event-runner";
import { toEngineState, type ParticipantRow } from "../participants/participant-repository";
import type { StudyRow } from "../studies/study-repository";

/** The event key the upload rule sees, with the payload {fileSize, contentType}, as in case-backend. */
export const FILE_UPLOAD_EVENT_KEY = "FILE_UPLOAD";

export type UploadDecision = { allowed: true } | { allowed: false; reason: string };

/**
 * Whether the study's participantFileUploadRule lets this participant upload this file. No rule
 * refuses (case-backend's default for every new study is a rule that is never true). A rule that
 * fails to evaluate refuses too; a number counts as true when it is not 0, as case-backend counts it.
 */
export async function checkUploadRule(
  db: Executor,
  study: Pick<StudyRow, "key" | "config">,
  participant: ParticipantRow,
  file: { size: number; contentType: string },
  ctx: DomainContext,
): Promise<UploadDecision> {
  const rule = study.config.participantFileUploadRule as Expression | undefined;
  if (rule === undefined || rule === null) {
    return { allowed: false, reason: `study "${study.key}" does not accept participant files` };
  }
  const { value, error } = await evaluateExpression(
    rule,
    toEngineState(participant),
    {
      type: "CUSTOM",
      studyKey: study.key,
      eventKey: FILE_UPLOAD_EVENT_KEY,
      payload: { fileSize: file.size, contentType: file.contentType },
    },
    engineEnvFor(db, study, ctx),
  );
  if (error !== undefined) return { allowed: false, reason: "the study's upload rule could not be evaluated" };
  const allowed = typeof value === "number" ? value !== 0 : value === true;
  return allowed ? { allowed: true } : { allowed: false, reason: "the study's upload rule does not allow this file" };
}

/**
 * Sets (or with null removes) a study's participantFileUploadRule after the engine's validator
 * has checked it, and records the change in the audit log (study.config.update) in the same
 * transaction. @throws Invalid for a rule the engine refuses, NotFound for an unknown study.
 */
export async function setParticipantFileUploadRule(
  db: Executor,
  studyKey: string,
  rule: unknown,
  actor: string,
  ctx: ClockContext,
): Promise<void> {
  if (rule !== null) {
    const issues = validateExpression(rule, "participantFileUploadRule");
    if (issues.length > 0) throw invalidRulesError(issues, { countHidden: false });
  }
  await db.transaction(async (tx) => {
    const [before] = await tx.select().from(studies).where(eq(studies.key, studyKey)).for("update").limit(1);
    if (!before) throw new NotFound(`study "${studyKey}" not found`);
    const { participantFileUploadRule: from = null, ...others } = before.config;
    const config: StudyConfig = rule === null ? others : { ...others, participantFileUploadRule: rule };
    await tx
      .update(studies)
      .set({ config, updatedAt: new Date(ctx.clock()) })
      .where(eq(studies.key, studyKey));
    await recordAudit(tx, {
      studyKey,
      actor,
      action: "study.config.update",
      details: { participantFileUploadRule: { from, to: rule } },
    });
  });
  forgetCached(db, "study", studyKey);
}
