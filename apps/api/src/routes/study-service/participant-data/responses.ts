import { assertProfileOfUser } from "@studyflow/domain/access";
import { nowSeconds } from "@studyflow/domain/foundation";
import { listOwnResponses } from "@studyflow/domain/participant-data";
import { participantOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { toExplorerQuery } from "../../studies/data-explorer/explorer-query";
import { presentResponsePage, responseListQuery, responsePageSchema } from "../../studies/data-explorer/response-page";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { PARTICIPANT_SECURITY, jsonContent } from "../../schemas";
import { profileDataErrors, pidQuery, studyParams } from "./profile-query";

export function registerResponses(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{studyKey}/responses",
      tags: ["participant-data"],
      summary: "A page of a profile's responses to one survey, flattened (CASE)",
      description:
        "The profile's responses to `surveyKey` (required) that `filter` selects (fields versionID, openedAt, " +
        "submittedAt, arrivedAt, context.<key>), by submission time unless `sort` says otherwise, each flattened as " +
        "CASE's data explorer flattens them (no account columns). Paged as case-backend pages (`page`, `limit`). The " +
        "participant's own id is always a condition, whatever the filter says.",
      security: PARTICIPANT_SECURITY,
      request: {
        params: studyParams,
        query: pidQuery.merge(responseListQuery),
      },
      responses: {
        200: jsonContent(responsePageSchema, "a page of responses"),
        ...profileDataErrors("pid or surveyKey missing; page, limit, filter or sort not valid"),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const query = c.req.valid("query");
      const profile = await assertProfileOfUser(db, participantOf(c).userId, query.pid);
      const page = await listOwnResponses(db, studyKey, profile.id, query.surveyKey, toExplorerQuery(query));
      return c.json(await presentResponsePage(db, studyKey, page, query, false, nowSeconds(deps)), 200);
    },
  );
}
