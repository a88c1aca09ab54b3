import type { Reporter, TestModule } from "vitest/node";

/**
 * Ends a run with one plain line, `Tests: N passed, N failed[, N skipped]`, which CI reads
 * without knowing vitest's own summary format. A file that failed outside its tests counts as one
 * failed test.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>) {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      let failedHere = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failedHere++;
        else skipped++;
      }
      // A file that failed with no failed test (it did not load, or a beforeAll/afterAll hook
      // threw) counts as one failure, so the line never says 0 failed for a red run.
      failed += failedHere === 0 && module.state() === "failed" ? 1 : failedHere;
    }
    process.stdout.write(`\nTests: ${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}\n`);
  }
}
