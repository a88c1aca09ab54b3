import { OpenAPIHono } from "@hono/zod-openapi";
import { bodyLimit } from "hono/body-limit";
import { createRedisRateLimiter } from "@studyflow/domain";
import type { AppEnv } from "./app-env";
import type { AppDeps } from "./deps";
import { errorBody, handleError } from "./errors";
import { createApiMetrics, registerMetrics } from "./metrics";
import { managementAuth, participantAuth } from "./middleware/auth";
import { httpMetrics } from "./middleware/metrics";
import { requestId } from "./middleware/request-id";
import { registerHealth } from "./routes/health";
import { registerPasswordReset } from "./routes/password-reset";
import { registerOpenApi } from "./routes/openapi";
import { registerSubmitResponse } from "./routes/participants/submit-response";
import { registerCreateTask } from "./routes/run-actions/create-task";
import { registerTaskEvents } from "./routes/run-actions/task-events";
import { registerTaskRoutes } from "./routes/run-actions/task-routes";
import { registerTrackAccount } from "./routes/studies/track-account";
import { registerParticipantEvents } from "./routes/study-events/participant-events";
import { registerTemporaryParticipantRoute } from "./routes/study-events/register-temporary";
import { validationHook } from "./validation";

/** Largest accepted request body; a study's rule set is the biggest thing anyone sends. */
const MAX_BODY_BYTES = 2 * 1024 * 1024;

export function createApp(deps: AppDeps) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  const limiter = createRedisRateLimiter(deps.redis, {
    prefix: deps.config.QUEUE_PREFIX,
    ...(deps.clock ? { clock: deps.clock } : {}),
  });

  const metrics = createApiMetrics();
  app.use(requestId(deps.logger));
  app.use(httpMetrics(metrics));
  app.use(
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => c.json(errorBody(`request body larger than ${MAX_BODY_BYTES} bytes`), 413),
    }),
  );
  app.use("/v1/studies/*", managementAuth(deps));
  app.use("/v1/study-service/events/*", participantAuth(deps));

  registerHealth(app, deps);
  registerMetrics(app, metrics);
  registerPasswordReset(app, deps, limiter);
  registerOpenApi(app);
  registerSubmitResponse(app, deps);
  registerCreateTask(app, deps);
  registerTaskRoutes(app, deps);
  registerTaskEvents(app, deps);
  registerTrackAccount(app, deps);
  registerParticipantEvents(app, deps, limiter);
  registerTemporaryParticipantRoute(app, deps, limiter);

  app.notFound((c) => c.json(errorBody(`no route for ${c.req.method} ${c.req.path}`), 404));
  app.onError(handleError);
  return app;
}

export type App = ReturnType<typeof createApp>;
