import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { NOTE, answerNoFile, oneFileRoute } from "./participant-file-params";

export function registerGetParticipantFile(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/files/{fileID}",
      tags: ["data-explorer"],
      summary: "Download a participant file (none yet)",
      description: NOTE.trim() + " Requires `get-participant-states`.",
      ...oneFileRoute,
    },
    (c) => answerNoFile(db, managementOf(c), c.req.valid("param"), "get-participant-states"),
  );
}
