import { z } from "@hono/zod-openapi";
import { loadCaseUser, updateContactPreferences } from "@studyflow/domain/participant-accounts";
import { participantOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent } from "../schemas";
import { userEnvelope } from "./case-user-schema";

const contactPreferencesRequest = z.object({
  subscribedToNewsletter: z.boolean().optional(),
  toggleWeeklySubscription: z.boolean().optional(),
  subscribedToWeekly: z.boolean().optional(),
  receiveWeeklyMessageDayOfWeek: z
    .number()
    .int("receiveWeeklyMessageDayOfWeek must be a whole number")
    .min(0, "receiveWeeklyMessageDayOfWeek: 0 (Sunday) to 6 (Saturday)")
    .max(6, "receiveWeeklyMessageDayOfWeek: 0 (Sunday) to 6 (Saturday)")
    .optional(),
});

export function registerUpdateContactPreferences(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  const { clock } = deps;
  defineRoute(
    router,
    {
      method: "put",
      path: "/contact-preferences",
      tags: ["user"],
      summary: "Change the account's contact preferences (CASE)",
      description:
        "As case-backend: the newsletter flag takes the value sent and `toggleWeeklySubscription: true` flips the weekly " +
        "subscription. An absent key leaves its preference as it is (case-backend would read an absent " +
        "`subscribedToNewsletter` as false). The answer holds the account with its new preferences. A participant app " +
        "signs in right after a sign-up and turns the newsletter off for the new account; when that sign-up was of " +
        "an existing account (its own address and password), the first such write (only `subscribedToNewsletter: " +
        "false`) within 5 minutes is skipped and answered alike, so signing up again leaves the account's settings " +
        "as they were.",
      security: PARTICIPANT_SECURITY,
      caseBody: contactPreferencesRequest,
      bodyDescription:
        "`subscribedToNewsletter`, `toggleWeeklySubscription` (true flips the weekly subscription), as CASE apps send " +
        "them; or `subscribedToWeekly` and `receiveWeeklyMessageDayOfWeek` set directly",
      responses: {
        200: jsonContent(userEnvelope.extend({ message: z.string() }), "the preferences are stored"),
        ...errorResponses([400, 401]),
      },
    },
    async (c) => {
      const { userId } = participantOf(c);
      const input = c.req.valid("json");
      await updateContactPreferences(
        db,
        userId,
        {
          ...(input.subscribedToNewsletter === undefined
            ? {}
            : { subscribedToNewsletter: input.subscribedToNewsletter }),
          ...(input.toggleWeeklySubscription === undefined
            ? {}
            : { toggleWeeklySubscription: input.toggleWeeklySubscription }),
          ...(input.subscribedToWeekly === undefined ? {} : { subscribedToWeekly: input.subscribedToWeekly }),
          ...(input.receiveWeeklyMessageDayOfWeek === undefined
            ? {}
            : { receiveWeeklyMessageDayOfWeek: input.receiveWeeklyMessageDayOfWeek }),
        },
        new Date(clock()),
      );
      return c.json({ message: "contact preferences updated", user: await loadCaseUser(db, userId) }, 200);
    },
  );
}
