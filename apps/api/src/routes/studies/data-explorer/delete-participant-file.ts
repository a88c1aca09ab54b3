import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { NOTE, answerNoFile, oneFileRoute } from "./participant-file-params";

export function registerDeleteParticipantFile(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "delete",
      path: "/files/{fileID}",
      tags: ["data-explorer"],
      summary: "Delete a participant file (none yet)",
      description: NOTE.trim() + " Requires `edit-participant-data`.",
      ...oneFileRoute,
    },
    (c) => answerNoFile(db, managementOf(c), c.req.valid("param"), "edit-participant-data"),
  );
}
