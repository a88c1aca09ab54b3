import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["apps/*/{src,test}/**/*.test.ts", "packages/*/{src,test}/**/*.test.ts", "e2e/test/**/*.test.ts"],
    globalSetup: ["packages/testkit/src/global-setup.ts"],
    setupFiles: ["packages/testkit/src/open-handles.ts"],
    reporters: ["default", "./packages/testkit/src/summary-reporter.ts"],
    // Tests talk to real Postgres and Redis; transactions and queues need more than the default 5 s.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: more parallel files only adds contention on the shared Postgres.
    maxWorkers: 2,
    // A worker runs its files one after another in one module graph instead of a fresh process
    // each: every file importing hono, drizzle, BullMQ and the domain anew cost ~3 s of the
    // ~1,180 s suite on 2 cores. Files share no state but what a process keeps by design
    // (caches keyed by what they hold, such as a stored rules row), and each opens and drops
    // its own database, app and BullMQ prefix.
    isolate: false,
    typecheck: { enabled: false },
  },
});
