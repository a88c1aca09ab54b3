import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// The interpreter needs no database or Redis, so it can be tested on its own (npm test -w
// @studyflow/go-template) without the workspace's global setup that migrates Postgres.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL("..", import.meta.url)),
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
  },
});
