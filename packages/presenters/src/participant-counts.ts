import { z } from "@hono/zod-openapi";
import type { ParticipantCounts } from "@studyflow/domain/participants";

export const participantCountsSchema = z
  .object({
    byStatus: z.record(z.string(), z.number().int()).openapi({
      description: "study status → participants; statuses without any are left out",
      example: { active: 940, exited: 60 },
    }),
    total: z.number().int().openapi({ description: "every participant, temporary and deleted accounts included" }),
  })
  .openapi("ParticipantCounts");

export function presentParticipantCounts(counts: ParticipantCounts): z.infer<typeof participantCountsSchema> {
  return { byStatus: counts.byStatus, total: counts.total };
}
