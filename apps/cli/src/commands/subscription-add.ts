import { Option } from "commander";
import { z } from "zod";
import { addSubscription, messageTypeProblem } from "@studyflow/domain/notifications";
import { defineCommand, type CliContext } from "../command-definition";
import { UPLOADED_BY } from "../command-support";
import { emailAddress, studyKey, text } from "../flag-values";
import { fieldLines } from "../output";

export interface SubscriptionAddInput {
  studyKey: string;
  /** A NOTIFY_RESEARCHER message type, or "*" for every type. */
  messageType: string;
  email: string;
}

export async function subscriptionAdd(ctx: CliContext, input: SubscriptionAddInput) {
  const { subscription, created } = await addSubscription(
    ctx.database.db,
    input.studyKey,
    { messageType: input.messageType, email: input.email },
    UPLOADED_BY,
  );
  const data = { studyKey: input.studyKey, subscription, created };
  const what = subscription.messageType === "*" ? "every notification" : `"${subscription.messageType}" notifications`;
  ctx.output.result(data, [
    `${subscription.email} ${created ? "subscribed" : "was already subscribed"} to ${what} of study "${input.studyKey}"`,
    ...fieldLines([["id", subscription.id]]),
  ]);
  return data;
}

export const subscriptionAddCommand = defineCommand({
  name: "subscription:add",
  summary: "subscribe an e-mail address to a study's researcher notifications of a type, or '*' for all (audited)",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option("--type <TYPE>", "NOTIFY_RESEARCHER message type, or '*' (quoted) for every type").makeOptionMandatory(),
    new Option("--email <EMAIL>", "the researcher's address").makeOptionMandatory(),
  ],
  values: z
    .object({
      study: studyKey,
      type: text.superRefine((type, ctx) => {
        const problem = messageTypeProblem(type);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      }),
      email: emailAddress,
    })
    .transform(({ study, type, email }): SubscriptionAddInput => ({
      studyKey: study,
      messageType: type,
      email: email.trim(),
    })),
  uses: "database",
  run: subscriptionAdd,
});
