import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import {
  DomainError,
  RateLimited,
  assertProfileOfUser,
  enterStudy,
  leaveStudy,
  mergeTemporaryParticipant,
  type RateLimiter,
} from "@studyflow/domain";
import { participantOf, type AppEnv } from "../../app-env";
import { presentAssignedSurveys } from "../../presenters/participant";
import { clientAddress } from "../../client-address";
import type { AppDeps } from "../../deps";
import { domainContext } from "../../domain-context";
import {
  PARTICIPANT_SECURITY,
  assignedSurveysEnvelope,
  authErrors,
  errorResponse,
  jsonBody,
  jsonContent,
  profileIdField,
  studyKeyParam,
} from "../schemas";

const BASE = "/v1/study-service/events/{studyKey}";

const enter = createRoute({
  method: "post",
  path: `${BASE}/enter`,
  tags: ["study-events"],
  summary: "A profile enters a study (or re-enters after leaving)",
  security: PARTICIPANT_SECURITY,
  request: { params: studyKeyParam, body: jsonBody(z.object({ profileID: profileIdField })) },
  responses: {
    200: jsonContent(assignedSurveysEnvelope.extend({ created: z.boolean() }), "the participant's surveys"),
    400: errorResponse("invalid body"),
    ...authErrors,
    404: errorResponse("study not found"),
    409: errorResponse("study not active"),
    422: errorResponse("the study's rules failed"),
  },
});

const leave = createRoute({
  method: "post",
  path: `${BASE}/leave`,
  tags: ["study-events"],
  summary: "A profile leaves a study",
  description: "Status becomes `exited`, then the LEAVE rules run; confidential responses are removed.",
  security: PARTICIPANT_SECURITY,
  request: { params: studyKeyParam, body: jsonBody(z.object({ profileID: profileIdField })) },
  responses: {
    200: jsonContent(assignedSurveysEnvelope, "the surveys after the LEAVE rules"),
    400: errorResponse("invalid body"),
    ...authErrors,
    404: errorResponse("study or participant not found"),
    409: errorResponse("study or participant not active"),
    422: errorResponse("the study's rules failed"),
  },
});

const merge = createRoute({
  method: "post",
  path: `${BASE}/merge-temporary-participant`,
  tags: ["study-events"],
  summary: "Merge a temporary participant into a profile's participant",
  security: PARTICIPANT_SECURITY,
  request: {
    params: studyKeyParam,
    body: jsonBody(
      z.object({
        profileID: profileIdField,
        temporaryParticipantID: z.string().min(1, "temporaryParticipantID must not be empty").max(200),
      }),
    ),
  },
  responses: {
    200: jsonContent(assignedSurveysEnvelope, "the target participant's surveys after the merge"),
    400: errorResponse("invalid body"),
    ...authErrors,
    404: errorResponse("study or temporary participant not found"),
    409: errorResponse("study not active, participant not temporary, or too old"),
    422: errorResponse("the study's rules failed"),
    429: errorResponse("too many failed merge attempts"),
  },
});

/**
 * Failed merges guess at a bearer secret (the temporary id): a caller gets this many failures
 * per window, per user and per address, before being turned away.
 */
const MERGE_FAILURES = { limit: 10, windowSeconds: 15 * 60 };

export function registerParticipantEvents(router: OpenAPIHono<AppEnv>, deps: AppDeps, limiter: RateLimiter) {
  const db = deps.database.db;

  router.openapi(enter, async (c) => {
    const { studyKey } = c.req.valid("param");
    const { userId } = participantOf(c);
    const profile = await assertProfileOfUser(db, userId, c.req.valid("json").profileID);
    const result = await enterStudy(db, { studyKey, userId, profile }, domainContext(deps));
    return c.json({ assignedSurveys: presentAssignedSurveys(result.participant), created: result.created }, 200);
  });

  router.openapi(leave, async (c) => {
    const { studyKey } = c.req.valid("param");
    const { userId } = participantOf(c);
    const profile = await assertProfileOfUser(db, userId, c.req.valid("json").profileID);
    const result = await leaveStudy(db, { studyKey, profileId: profile.id }, domainContext(deps));
    return c.json({ assignedSurveys: presentAssignedSurveys(result.participant) }, 200);
  });

  router.openapi(merge, async (c) => {
    const { studyKey } = c.req.valid("param");
    const { userId } = participantOf(c);
    const body = c.req.valid("json");
    const buckets = [`merge-fail:user:${userId}`, `merge-fail:ip:${clientAddress(c)}`];
    for (const bucket of buckets) {
      const decision = await limiter.peek(bucket, MERGE_FAILURES.limit, MERGE_FAILURES.windowSeconds);
      if (!decision.allowed) {
        throw new RateLimited("too many failed merge attempts; try again later", decision.retryAfterSeconds);
      }
    }
    const profile = await assertProfileOfUser(db, userId, body.profileID);
    try {
      const result = await mergeTemporaryParticipant(
        db,
        {
          studyKey,
          userId,
          profile,
          temporaryParticipantId: body.temporaryParticipantID,
          maxAgeSeconds: deps.config.TEMP_PARTICIPANT_MAX_AGE_SECONDS,
        },
        domainContext(deps),
      );
      return c.json({ assignedSurveys: presentAssignedSurveys(result.participant) }, 200);
    } catch (error) {
      if (error instanceof DomainError && (error.kind === "not-found" || error.kind === "conflict")) {
        for (const bucket of buckets) await limiter.hit(bucket, MERGE_FAILURES.limit, MERGE_FAILURES.windowSeconds);
      }
      throw error;
    }
  });
}
