import { z } from "@hono/zod-openapi";
import { participantTokenInfos } from "@studyflow/domain/participant-sign-in";
import { decodeJwt } from "jose";
import { participantOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import { participantAuth } from "../../middleware/auth";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent } from "../schemas";

const tokenInfosSchema = z
  .object({
    instance_id: z.string(),
    profile_id: z.string().optional(),
    session_id: z.string().optional(),
    accountConfirmed: z.boolean().optional(),
    other_profile_ids: z.array(z.string()).optional(),
    sub: z.string(),
    iat: z.number().int().optional(),
    exp: z.number().int().optional(),
  })
  .openapi("CaseTokenInfos");

/** The times of a token the auth has verified already; only read here, never trusted for more. */
function tokenTimes(authorization: string | undefined): { iat?: number; exp?: number } {
  const token = authorization?.replace(/^Bearer\s+/i, "").trim() ?? "";
  try {
    const { iat, exp } = decodeJwt(token);
    return { ...(typeof iat === "number" ? { iat } : {}), ...(typeof exp === "number" ? { exp } : {}) };
  } catch {
    return {};
  }
}

export function registerValidateToken(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/token/validate",
      tags: ["participant auth"],
      summary: "Whether this access token is valid, and what it says (CASE)",
      description:
        "case-backend's validateToken: 200 with `tokenInfos` in the claim names of case-backend's participant " +
        "tokens (`instance_id`, `profile_id`, `session_id`, `accountConfirmed`, `other_profile_ids`, `sub`, `iat`, " +
        "`exp`; empty ones left out, as Go's omitempty does) for a token every participant route accepts, 401 " +
        "otherwise (expired, signed out, revoked, account gone). The profiles and the confirmation are read now, " +
        "not from the token. case-backend refuses this GET without a body (400 `payload missing`); studyflow reads " +
        "no body and accepts the request with or without one.",
      security: PARTICIPANT_SECURITY,
      middleware: [participantAuth(deps)],
      responses: {
        200: jsonContent(z.object({ tokenInfos: tokenInfosSchema }), "the token is valid"),
        ...errorResponses([401]),
      },
    },
    async (c) => {
      const principal = participantOf(c);
      const infos = await participantTokenInfos(db, principal);
      return c.json(
        {
          tokenInfos: {
            instance_id: deps.config.INSTANCE_ID,
            ...(infos.profileId ? { profile_id: infos.profileId } : {}),
            ...(principal.sessionId ? { session_id: principal.sessionId } : {}),
            ...(infos.accountConfirmed ? { accountConfirmed: true } : {}),
            ...(infos.otherProfileIds.length > 0 ? { other_profile_ids: infos.otherProfileIds } : {}),
            sub: principal.userId,
            ...tokenTimes(c.req.header("authorization")),
          },
        },
        200,
      );
    },
  );
}
