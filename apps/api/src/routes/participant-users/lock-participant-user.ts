import { lockParticipantAccount } from "@studyflow/domain/participant-accounts";
import { presentParticipantAccount } from "@studyflow/presenters/participant-account";
import { managementOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY } from "../schemas";
import { accountAction } from "./account-action";
import { accountAnswer, userIdParam } from "./account-schemas";

export function registerLockParticipantUser(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/{id}/lock",
      tags: ["participant-users"],
      summary: "Lock a participant account",
      description:
        "No sign-in and no token renewal until unlocked; every session ends now, access tokens too. Audited " +
        "(`participant-user.lock`). Admin only.",
      security: MANAGEMENT_SECURITY,
      request: { params: userIdParam },
      responses: { 200: accountAnswer, ...errorResponses([401, 403, 404]) },
    },
    async (c) => {
      const account = await lockParticipantAccount(
        db,
        accountAction(deps, c.req.valid("param").id, managementOf(c).subject),
      );
      return c.json({ account: presentParticipantAccount(account) }, 200);
    },
  );
}
