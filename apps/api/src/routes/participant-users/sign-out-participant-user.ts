import { z } from "@hono/zod-openapi";
import { signOutParticipantAccount } from "@studyflow/domain/participant-accounts";
import { managementOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../schemas";
import { accountAction } from "./account-action";
import { userIdParam } from "./account-schemas";

export function registerSignOutParticipantUser(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/{id}/sign-out",
      tags: ["participant-users"],
      summary: "Sign a participant account out everywhere",
      description:
        "Every session and every access token of the account stops working now; the participant can sign in " +
        "again. Audited (`participant-user.sign-out`). Admin only.",
      security: MANAGEMENT_SECURITY,
      request: { params: userIdParam },
      responses: {
        200: jsonContent(z.object({ sessionsEnded: z.number().int() }), "how many open sessions ended"),
        ...errorResponses([401, 403, 404]),
      },
    },
    async (c) => {
      const sessionsEnded = await signOutParticipantAccount(
        db,
        accountAction(deps, c.req.valid("param").id, managementOf(c).subject),
      );
      return c.json({ sessionsEnded }, 200);
    },
  );
}
