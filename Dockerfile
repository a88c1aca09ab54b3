# One image for api, worker, migrate and the CLI (demo seed): the workspace runs its TypeScript
# sources with tsx, exactly as the tests do, so what is tested is what ships.
FROM node:24-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
COPY apps/api/package.json apps/api/
COPY apps/cli/package.json apps/cli/
COPY apps/worker/package.json apps/worker/
COPY packages/config/package.json packages/config/
COPY packages/db/package.json packages/db/
COPY packages/domain/package.json packages/domain/
COPY packages/engine/package.json packages/engine/
COPY packages/queue/package.json packages/queue/
COPY packages/testkit/package.json packages/testkit/
# Dev dependencies stay in: tsx runs the sources and drizzle-kit belongs to the migrate image.
RUN npm ci --include=dev --no-audit --no-fund
COPY tsconfig.json drizzle.config.ts ./
COPY apps apps
COPY packages packages
# Named volumes mounted here inherit this ownership on first use.
RUN mkdir -p /data/results && chown node:node /data/results
USER node
CMD ["npx", "tsx", "apps/api/src/index.ts"]
