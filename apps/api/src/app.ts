import type { Context } from "hono";
import { attachReadCache } from "@studyflow/domain/cache";
import type { AppEnv } from "./app-env";
import { createConsoleRouter } from "./console";
import type { AppDeps } from "./deps";
import { errorBody, handleError } from "./errors";
import { createApiMetrics, metricsExposure, registerMetrics, type ApiMetrics } from "./metrics";
import { resolveClientAddress } from "./client-address";
import { MAX_BODY_BYTES, limitBodySize } from "./middleware/body-size";
import { inputBoundary } from "./middleware/input-boundary";
import { httpMetrics } from "./middleware/metrics";
import { requestId } from "./middleware/request-id";
import { createRedisRateLimiter } from "./rate-limit";
import { createAuthRouter } from "./routes/auth";
import { createHealthRouter } from "./routes/health";
import { createMessagingRouter } from "./routes/messaging";
import { registerOpenApi } from "./routes/docs";
import { isParticipantFileUpload } from "./routes/study-service/participant-data/files";
import { createParticipantUsersRouter } from "./routes/participant-users";
import { createPasswordResetRouter } from "./routes/password-reset";
import { createResetPasswordPageRouter } from "./routes/reset-password";
import { createStudiesRouter } from "./routes/studies";
import { createStudyServiceRouter } from "./routes/study-service";
import { createNewsletterRouter } from "./routes/unsubscribe-newsletter";
import { createUserRouter } from "./routes/user";
import { createUserManagementRouter } from "./routes/user-management";
import { createRouter } from "./routes/create-router";

/**
 * The API. `metrics` is the registry it counts into: the server passes its own when it serves
 * /metrics on an admin port of its own (METRICS_PORT).
 */
export function createApp(appDeps: AppDeps, metrics: ApiMetrics = createApiMetrics()) {
  const app = createRouter();
  // Reads through this database handle are served from the cache (see packages/domain/src/cache).
  if (appDeps.readCache) attachReadCache(appDeps.database.db, appDeps.readCache);
  const deps: AppDeps = {
    ...appDeps,
    onRuleFailures: (failures) => {
      for (const failure of failures) {
        metrics.ruleFailures.inc({ event_type: failure.eventType, outcome: failure.outcome });
      }
      appDeps.onRuleFailures?.(failures);
    },
  };
  const limiter = createRedisRateLimiter(deps.redis, {
    prefix: deps.config.QUEUE_PREFIX,
    clock: deps.clock,
  });

  app.use(requestId(deps.logger));
  app.use(httpMetrics(metrics));
  // Every body is bounded before anything reads it. A participant file upload carries an image
  // larger than any JSON body: its route authenticates the participant first, then bounds and reads
  // the body itself (PARTICIPANT_FILE_MAX_BYTES); nothing here reads it.
  const uploadReadsItsBody = (c: Context<AppEnv>) => isParticipantFileUpload(c.req.method, c.req.path);
  const bodySize = limitBodySize(MAX_BODY_BYTES);
  // a plain condition: hono's except() composes its middleware anew and makes an Error per request
  app.use((c, next) => (uploadReadsItsBody(c) ? next() : bodySize(c, next)));
  app.use(inputBoundary({ bodyLeftToRoute: uploadReadsItsBody }));
  app.use(resolveClientAddress(deps.config.TRUST_PROXY, deps.config.PARTICIPANT_APP_ADDRESSES));

  // The one place paths get their prefix. Each router brings its own auth, which runs for every
  // path below its prefix (an unknown one too: 401 before 404).
  app.route("/", createHealthRouter(deps));
  app.route("/v1/auth", createAuthRouter(deps, limiter));
  app.route("/v1/password-reset", createPasswordResetRouter(deps, limiter));
  app.route("/v1/user", createUserRouter(deps, limiter));
  app.route("/v1/unsubscribe-newsletter", createNewsletterRouter(deps, limiter));
  app.route("/reset-password", createResetPasswordPageRouter());
  app.route("/console", createConsoleRouter(deps));
  app.route("/v1/studies", createStudiesRouter(deps));
  app.route("/v1/study-service", createStudyServiceRouter(deps, limiter));
  app.route("/v1/participant-users", createParticipantUsersRouter(deps, limiter));
  app.route("/v1/messaging", createMessagingRouter(deps));
  app.route("/v1/user-management", createUserManagementRouter(deps, limiter));

  // Built from the whole app: the document lists every mounted router's operations.
  registerOpenApi(app);
  // On this port only when configured so (see metricsExposure); elsewhere it is a 404 here.
  registerMetrics(app, metrics, metricsExposure(deps.config));

  app.notFound((c) => c.json(errorBody(`no route for ${c.req.method} ${c.req.path}`), 404));
  app.onError(handleError);
  return app;
}

export type App = ReturnType<typeof createApp>;
