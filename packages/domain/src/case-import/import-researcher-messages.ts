import { eq } from "drizzle-orm";
import { researcherMessages } from "@studyflow/db";
import type { ClockContext } from "../foundation/clock";
import { asRecord, asString, documentId, isObjectIdHex, toPlain } from "./case-values";
import { absentResearcherMessages } from "./import-absent";
import { skipped, type CollectionImporter, type DocumentOutcome } from "./import-batch";
import { importRecordedRow } from "./import-record";

/**
 * `<studyKey>_researcherMessages` (case-backend's types.StudyMessage): the NOTIFY_RESEARCHER
 * messages CASE's notification job had not sent yet (it deletes what it sent). They come in
 * undelivered, so studyflow's notification job sends them to the study's subscribers as CASE's
 * would have. case_import_records pairs each with its row, which has an id of studyflow's own.
 */

const payloadOf = (value: unknown): Record<string, string> =>
  Object.fromEntries(
    Object.entries(asRecord(value)).map(([key, item]) => {
      const plain = toPlain(item);
      return [key, typeof plain === "string" ? plain : plain === null ? "" : JSON.stringify(plain)];
    }),
  );

export function researcherMessagesImporter(studyKey: string, replace: boolean, ctx: ClockContext): CollectionImporter {
  return {
    absent: absentResearcherMessages(studyKey),
    importBatch: async (tx, batch, write) => {
      const outcomes: DocumentOutcome[] = [];
      for (const { bytes, document } of batch) {
        const objectId = documentId(document);
        if (!isObjectIdHex(objectId)) {
          outcomes.push(skipped("the message has no ObjectId _id"));
          continue;
        }
        const type = asString(document["type"]);
        if (type === "") {
          outcomes.push(skipped("the message has no type"));
          continue;
        }
        const fields = {
          studyKey,
          participantId: asString(document["participantID"]),
          type,
          payload: payloadOf(document["payload"]),
        };
        const outcome = await importRecordedRow(
          tx,
          {
            kind: "researcher-message",
            sourceId: `${studyKey}/${objectId}`,
            label: "this message",
            findNatural: () => Promise.resolve(undefined),
            exists: async (t, targetId) =>
              (
                await t
                  .select({ id: researcherMessages.id })
                  .from(researcherMessages)
                  .where(eq(researcherMessages.id, Number(targetId)))
              ).length > 0,
            insert: async (t) => {
              const [row] = await t
                .insert(researcherMessages)
                .values({ ...fields, createdAt: new Date(parseInt(objectId.slice(0, 8), 16) * 1000) })
                .returning({ id: researcherMessages.id });
              return String(row!.id);
            },
            update: async (t, targetId) => {
              await t
                .update(researcherMessages)
                .set(fields)
                .where(eq(researcherMessages.id, Number(targetId)));
            },
          },
          bytes,
          write,
          replace,
          ctx,
        );
        outcomes.push(outcome);
      }
      return outcomes;
    },
  };
}
