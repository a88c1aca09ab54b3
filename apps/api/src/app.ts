import { OpenAPIHono } from "@hono/zod-openapi";
import { bodyLimit } from "hono/body-limit";
import type { AppEnv } from "./app-env";
import type { AppDeps } from "./deps";
import { errorBody, handleError } from "./errors";
import { requestId } from "./middleware/request-id";
import { registerHealth } from "./routes/health";
import { validationHook } from "./validation";

/** Largest accepted request body; a study's rule set is the biggest thing anyone sends. */
const MAX_BODY_BYTES = 2 * 1024 * 1024;

export function createApp(deps: AppDeps) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  app.use(requestId(deps.logger));
  app.use(
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => c.json(errorBody(`request body larger than ${MAX_BODY_BYTES} bytes`), 413),
    }),
  );

  registerHealth(app, deps);

  app.notFound((c) => c.json(errorBody(`no route for ${c.req.method} ${c.req.path}`), 404));
  app.onError(handleError);
  return app;
}

export type App = ReturnType<typeof createApp>;
