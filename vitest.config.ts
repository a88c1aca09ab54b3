import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["apps/*/{src,test}/**/*.test.ts", "packages/*/{src,test}/**/*.test.ts", "e2e/test/**/*.test.ts"],
    globalSetup: ["packages/testkit/src/global-setup.ts"],
    reporters: ["default", "./packages/testkit/src/summary-reporter.ts"],
    // Tests talk to real Postgres and Redis; transactions and queues need more than the default 5 s.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: more parallel files only adds contention on the shared Postgres.
    maxWorkers: 2,
    typecheck: { enabled: false },
  },
});
