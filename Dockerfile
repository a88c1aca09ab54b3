# syntax=docker/dockerfile:1
# One image for every process: the API (the default command), the worker, the migrations and the
# operator CLI (the demo seed); each compose service chooses its command. It ships compiled
# JavaScript (`npm run build`, see esbuild.config.ts) and production dependencies only, runs
# `node` directly under tini as PID 1, as the unprivileged `node` user.
# e2e/test/compose-check.test.ts checks this file against docker-compose.yml and the build.

# The Node of .nvmrc and .ci/run, which the tests run on (the compose check compares them).
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

# ---- base: tini and the workspace manifests, all that `npm ci` reads -----------------------------
FROM ${NODE_IMAGE} AS base
# tini as PID 1 passes SIGTERM on to node (graceful shutdown) and reaps orphaned processes, however
# the image is started (docker run without --init, compose, Kubernetes).
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# Every workspace's package.json, the dev-only ones (testkit, e2e) included: npm ci needs the tree
# the lockfile describes. Their dependencies are all runtime dependencies of the apps as well.
COPY package.json package-lock.json ./
COPY apps/api/package.json apps/api/
COPY apps/cli/package.json apps/cli/
COPY apps/worker/package.json apps/worker/
COPY packages/case-export/package.json packages/case-export/
COPY packages/config/package.json packages/config/
COPY packages/db/package.json packages/db/
COPY packages/domain/package.json packages/domain/
COPY packages/engine/package.json packages/engine/
COPY packages/go-template/package.json packages/go-template/
COPY packages/presenters/package.json packages/presenters/
COPY packages/queue/package.json packages/queue/
COPY packages/testkit/package.json packages/testkit/
COPY e2e/package.json e2e/
# The reviewed fixes of dependencies that `npm ci` applies (postinstall: patch-package).
COPY patches patches

# ---- build: dev dependencies, sources, `npm run build` → /app/dist -------------------------------
FROM base AS build
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
COPY tsconfig.json esbuild.config.ts ./
COPY apps apps
COPY packages packages
RUN npm run build

# ---- runtime: production dependencies and the compiled entries -----------------------------------
FROM base AS runtime
ENV NODE_ENV=production
# typescript is only an optional peer of a dependency (valibot, for its types): installed because
# the lockfile holds it, never loaded at run time.
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund \
  && rm -rf node_modules/typescript
# dist/: api/index.js (which loads api/main.js), worker/index.js, cli/main.js, db/migrate-cli.js with their source maps, the
# migrations (dist/migrations) and the files the code reads beside itself (common-passwords.txt).
COPY --from=build /app/dist dist
# Named volumes mounted here (task results, the demo seed's file) take this ownership on first use.
RUN mkdir -p /data/results /data/demo && chown node:node /data/results /data/demo
USER node
# Stack traces point into the TypeScript sources, and V8's young generation is capped as
# packages/config/src/young-generation.ts explains; results go where the node user may write even
# when RESULT_DIR is not given (the default under /app is root's); the API's /metrics is on an
# admin port of its own, not on the public PORT (not EXPOSEd: `docker run -P` must not publish it).
ENV NODE_OPTIONS="--enable-source-maps --max-semi-space-size=16" RESULT_DIR=/data/results METRICS_PORT=9464
EXPOSE 8080 8081
# The API's liveness on PORT; compose gives the worker (HEALTH_PORT) its own and turns it off for
# the one-shot services.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/api/index.js"]
