/**
 * docs/cli.md's "Worked example: a study set up and run without SQL" (README's walkthrough before
 * the reference moved to docs/), run as it stands: its shell block, with bash, against the API
 * served on a free port (the test app's database and configuration), the CLI through `npm run cli`
 * as an operator types it. What it prints and what it leaves in the database are checked, so the
 * page cannot drift from the product.
 */
import { asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, participants, ruleFailures, surveyResponses, studyCodeLists } from "@studyflow/db";
import { cliEnvironment, runShellBlock, serveTestApp, shellBlockBelow, type ServedTestApp } from "./doc-shell-block";

const DOCUMENT = "docs/cli.md";
const HEADING = "### Worked example: a study set up and run without SQL";

describe("docs/cli.md: a study set up and run without SQL", () => {
  let api: ServedTestApp;

  beforeAll(async () => {
    api = await serveTestApp();
  });
  afterAll(async () => {
    await api.close();
  });

  it("runs every command of the block and the study ends as README says", { timeout: 300_000 }, async () => {
    const script = await shellBlockBelow(DOCUMENT, HEADING);
    const { stdout } = await runShellBlock(script, { ...cliEnvironment(api.t), API: api.url });

    // what the page says the participant sees
    const lines = stdout.split("\n");
    expect(lines).toContain('["intake"]');
    expect(lines).toContain('["weekly"]');
    expect(lines).toContain('{"intakeDone":"yes","kitType":"nasal-swab"}');
    expect(stdout).toMatch(/\{"key":"intake","versionId":"\d\d-\d\d-1"\}/);
    expect(stdout).toMatch(/list "kit-codes" of study "flu-watch" holds 2 codes/);
    expect(stdout).toMatch(/kitStock\s+int\s+1\n/);

    // and what the study holds: the response with its known version, no rule failure
    const db = api.t.database.db;
    const responses = await db.select().from(surveyResponses).where(eq(surveyResponses.studyKey, "flu-watch"));
    expect(responses.map((r) => [r.key, r.versionId])).toEqual([["intake", expect.stringMatching(/^\d\d-\d\d-1$/)]]);
    expect(await db.select().from(ruleFailures).where(eq(ruleFailures.studyKey, "flu-watch"))).toEqual([]);
    const [participant] = await db.select().from(participants).where(eq(participants.studyKey, "flu-watch"));
    expect(participant?.linkingCodes).toEqual({ kit: "KIT-0001" });
    expect(await db.select().from(studyCodeLists).where(eq(studyCodeLists.studyKey, "flu-watch"))).toHaveLength(2);
    const audited = await db
      .select({ actor: auditLog.actor, action: auditLog.action })
      .from(auditLog)
      .where(eq(auditLog.studyKey, "flu-watch"))
      .orderBy(asc(auditLog.id));
    expect(audited).toEqual([
      { actor: "operator-cli", action: "study.create" },
      { actor: "operator-cli", action: "study.props.update" },
      { actor: "operator-cli", action: "study.config.update" },
      { actor: "operator-cli", action: "survey.publish" },
      { actor: "operator-cli", action: "survey.publish" },
      { actor: "operator-cli", action: "code-list.add" },
      { actor: "operator-cli", action: "variable.define" },
      { actor: "operator-cli", action: "rules.set" },
      { actor: "lab-stock", action: "variable.set" },
    ]);
  });
});
