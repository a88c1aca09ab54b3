import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { assertStudyPermission, updateTrackAccount } from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonBody, jsonContent, messageSchema, studyKeyParam } from "../schemas";

const route = createRoute({
  method: "put",
  path: "/{studyKey}/track-account",
  tags: ["studies"],
  summary: "Switch account tracking on or off for a study",
  description:
    "With tracking on, participants created from a profile store an HMAC of the account id and the main-profile " +
    "flag. An absent `trackAccount` leaves the flag unchanged. Requires `update-study-props`.",
  security: MANAGEMENT_SECURITY,
  request: {
    params: studyKeyParam,
    body: jsonBody(z.object({ trackAccount: z.boolean({ error: "trackAccount must be a boolean" }).optional() })),
  },
  responses: {
    200: jsonContent(messageSchema, "the resulting value of the flag"),
    ...errorResponses([400, 401, 403, 404], {
      400: "trackAccount is not a boolean",
      404: "study not found",
    }),
  },
});

export function registerTrackAccount(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  router.openapi(route, async (c) => {
    const { studyKey } = c.req.valid("param");
    await assertStudyPermission(deps.database.db, managementOf(c), studyKey, "update-study-props");
    const value = await updateTrackAccount(deps.database.db, studyKey, c.req.valid("json").trackAccount);
    return c.json({ message: `account tracking is ${value ? "on" : "off"} for study "${studyKey}"` }, 200);
  });
}
