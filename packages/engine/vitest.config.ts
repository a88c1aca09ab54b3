import { defineConfig } from "vitest/config";

// The engine needs no database or Redis, so it can also be tested on its own (npm test -w
// @studyflow/engine) without the workspace's global setup.
export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
  },
});
