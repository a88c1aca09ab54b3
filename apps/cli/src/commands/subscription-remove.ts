import { Option } from "commander";
import { z } from "zod";
import { removeSubscription } from "@studyflow/domain/notifications";
import { defineCommand, type CliContext } from "../command-definition";
import { UPLOADED_BY } from "../command-support";
import { studyKey, wholeNumber } from "../flag-values";

export interface SubscriptionRemoveInput {
  studyKey: string;
  id: number;
}

export async function subscriptionRemove(ctx: CliContext, input: SubscriptionRemoveInput) {
  const removed = await removeSubscription(ctx.database.db, input.studyKey, input.id, UPLOADED_BY);
  const data = { studyKey: input.studyKey, removed };
  const what = removed.messageType === "*" ? "every notification" : `"${removed.messageType}" notifications`;
  ctx.output.result(data, [
    `subscription ${removed.id} removed: ${removed.email} no longer receives ${what} of study "${input.studyKey}"`,
  ]);
  return data;
}

export const subscriptionRemoveCommand = defineCommand({
  name: "subscription:remove",
  summary: "remove a subscription to a study's notifications, by the id subscription:list shows (audited)",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option("--id <ID>", "the subscription's id").makeOptionMandatory(),
  ],
  values: z
    .object({ study: studyKey, id: wholeNumber(1, Number.MAX_SAFE_INTEGER) })
    .transform(({ study, id }): SubscriptionRemoveInput => ({ studyKey: study, id })),
  uses: "database",
  run: subscriptionRemove,
});
