import { Option } from "commander";
import { z } from "zod";
import { listSubscriptions } from "@studyflow/domain/notifications";
import { tableLines } from "../output";
import { defineCommand, type CliContext } from "../command-definition";
import { studyKey } from "../flag-values";

export interface SubscriptionListInput {
  studyKey: string;
}

const COLUMNS = ["id", "type", "email", "added by", "added at"] as const;

export async function subscriptionList(ctx: CliContext, input: SubscriptionListInput) {
  const subscriptions = await listSubscriptions(ctx.database.db, input.studyKey);
  const data = { studyKey: input.studyKey, subscriptions };
  ctx.output.result(data, [
    `${subscriptions.length} subscription${subscriptions.length === 1 ? "" : "s"} in study "${input.studyKey}"`,
    ...(subscriptions.length === 0
      ? []
      : tableLines([
          COLUMNS,
          ...subscriptions.map((s) => [String(s.id), s.messageType, s.email, s.createdBy, s.createdAt.toISOString()]),
        ])),
  ]);
  return data;
}

export const subscriptionListCommand = defineCommand({
  name: "subscription:list",
  summary: "list the researchers subscribed to a study's notifications, by type ('*': every type)",
  flags: () => [new Option("--study <KEY>", "study key").makeOptionMandatory()],
  values: z.object({ study: studyKey }).transform(({ study }): SubscriptionListInput => ({ studyKey: study })),
  uses: "database",
  run: subscriptionList,
});
