import { unlockParticipantAccount } from "@studyflow/domain/participant-accounts";
import { presentParticipantAccount } from "@studyflow/presenters/participant-account";
import { managementOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY } from "../schemas";
import { accountAction } from "./account-action";
import { accountAnswer, userIdParam } from "./account-schemas";

export function registerUnlockParticipantUser(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/{id}/unlock",
      tags: ["participant-users"],
      summary: "Unlock a participant account",
      description: "The account can sign in again. Audited (`participant-user.unlock`). Admin only.",
      security: MANAGEMENT_SECURITY,
      request: { params: userIdParam },
      responses: {
        200: accountAnswer,
        ...errorResponses([401, 403, 404, 409], { 409: "the account is being deleted" }),
      },
    },
    async (c) => {
      const account = await unlockParticipantAccount(
        db,
        accountAction(deps, c.req.valid("param").id, managementOf(c).subject),
      );
      return c.json({ account: presentParticipantAccount(account) }, 200);
    },
  );
}
