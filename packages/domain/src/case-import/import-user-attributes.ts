import { and, eq, ne } from "drizzle-orm";
import { userAttributes } from "@studyflow/db";
import { canonicalJson, documentId, isObjectIdHex, toPlain } from "./case-values";
import { INSERTED, skipped, UNCHANGED, UPDATED, type CollectionImporter, type DocumentOutcome } from "./import-batch";
import { goTime, importedTarget } from "./import-record";

/**
 * `userAttributes` of the users database (case-backend's types.UserAttributes): what the app keeps
 * about an account, under the account the users import made of `userId`, keeping its ObjectId as
 * its id (the table's ids are 24 hex digits for this). An account that was not imported takes its
 * attributes nowhere: the document is reported.
 */
export function userAttributesImporter(replace: boolean): CollectionImporter {
  return {
    importBatch: async (tx, batch, write) => {
      const outcomes: DocumentOutcome[] = [];
      for (const { document } of batch) {
        const id = documentId(document);
        if (!isObjectIdHex(id)) {
          outcomes.push(skipped("the attributes have no ObjectId _id"));
          continue;
        }
        const caseUserId = toPlain(document["userId"]);
        const type = toPlain(document["type"]);
        if (typeof caseUserId !== "string" || !isObjectIdHex(caseUserId)) {
          outcomes.push(skipped("the attributes name no account (userId)"));
          continue;
        }
        if (typeof type !== "string" || type === "") {
          outcomes.push(skipped("the attributes have no type"));
          continue;
        }
        const userId = await importedTarget(tx, "user", caseUserId);
        if (userId === undefined) {
          outcomes.push(skipped(`account ${caseUserId} was not imported`));
          continue;
        }
        const plain = toPlain(document["attributes"]);
        const attributes = plain !== null && typeof plain === "object" && !Array.isArray(plain) ? plain : null;
        const createdAt = goTime(document["createdAt"]) ?? new Date(parseInt(id.slice(0, 8), 16) * 1000);
        const row = { id, userId, type, attributes, createdAt };
        const [existing] = await tx.select().from(userAttributes).where(eq(userAttributes.id, id));
        const [other] = await tx
          .select({ id: userAttributes.id })
          .from(userAttributes)
          .where(and(eq(userAttributes.userId, userId), eq(userAttributes.type, type), ne(userAttributes.id, id)));
        if (other && !replace) {
          outcomes.push(
            skipped(`studyflow already has attributes of type "${type}" for the account; --replace overwrites them`),
          );
          continue;
        }
        const content = (r: Pick<typeof userAttributes.$inferSelect, "userId" | "type" | "attributes" | "createdAt">) =>
          canonicalJson([r.userId, r.type, r.attributes, r.createdAt.getTime()]);
        if (existing && !other && content(existing) === content(row)) {
          outcomes.push(UNCHANGED);
          continue;
        }
        if (write) {
          if (other) await tx.delete(userAttributes).where(eq(userAttributes.id, other.id));
          const { id: _id, ...set } = row;
          await tx.insert(userAttributes).values(row).onConflictDoUpdate({ target: userAttributes.id, set });
        }
        outcomes.push(existing || other ? UPDATED : INSERTED);
      }
      return outcomes;
    },
  };
}
