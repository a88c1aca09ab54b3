import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog } from "@studyflow/db";
import { createStudy } from "@studyflow/domain/study-setup";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";
import { runCommandLine } from "./run-command-line";

let database: TestDatabase;
let workingDirectory: string;

beforeAll(async () => {
  database = await createTestDatabase();
  workingDirectory = await mkdtemp(join(tmpdir(), "studyflow-message-templates-"));
  await createStudy(database.db, { key: "flu-watch" });
  await writeFile(
    join(workingDirectory, "reminder-en.txt"),
    "Hello,\n\nthis week's survey of {{studyName}} is open.\n",
  );
  await writeFile(join(workingDirectory, "reminder-de.txt"), "Guten Tag,\n\ndie Umfrage dieser Woche ist offen.\n");
  await writeFile(join(workingDirectory, "go-template.txt"), "Hello {{.profileAlias}}\n");
});
afterAll(async () => {
  await database.drop();
  await rm(workingDirectory, { recursive: true, force: true });
});

const run = (argv: string[]) => runCommandLine(database, argv, workingDirectory);

async function json<T = Record<string, any>>(argv: string[]): Promise<T> {
  const result = await run([...argv, "--json"]);
  expect(result.stderr, argv.join(" ")).toBe("");
  expect(result.exitCode).toBe(0);
  return JSON.parse(result.stdout) as T;
}

const set = (language: string, file: string, subject = "{{studyName}}: weekly survey") => [
  "message-template:set",
  "--study",
  "flu-watch",
  "--type",
  "weekly-reminder",
  "--language",
  language,
  "--subject",
  subject,
  "--body-file",
  file,
];

describe("message-template:set, :list and :delete", () => {
  it("uploads templates from files, lists them, replaces and deletes one, all audited", async () => {
    const created = await json(set("en", "reminder-en.txt"));
    expect(created).toMatchObject({
      studyKey: "flu-watch",
      created: true,
      messageTemplate: {
        messageType: "weekly-reminder",
        language: "en",
        subject: "{{studyName}}: weekly survey",
        body: "Hello,\n\nthis week's survey of {{studyName}} is open.\n",
        updatedBy: "operator-cli",
      },
    });
    expect((await json(set("de", "reminder-de.txt", "Ihre Wochenumfrage"))).created).toBe(true);
    expect((await json(set("de", "reminder-de.txt", "{{studyName}}: Ihre Wochenumfrage"))).created).toBe(false);

    const human = await run(["message-template:list", "--study", "flu-watch"]);
    expect(human.exitCode).toBe(0);
    expect(human.stdout).toContain('2 message templates in study "flu-watch"');
    expect(human.stdout).toMatch(/weekly-reminder de\s+\{\{studyName\}\}: Ihre Wochenumfrage/);
    const listed = await json<{ messageTemplates: { language: string }[] }>([
      "message-template:list",
      "--study",
      "flu-watch",
    ]);
    expect(listed.messageTemplates.map((m) => m.language)).toEqual(["de", "en"]);

    const deleted = await run([
      "message-template:delete",
      "--study",
      "flu-watch",
      "--type",
      "weekly-reminder",
      "--language",
      "de",
    ]);
    expect(deleted).toMatchObject({ exitCode: 0, stderr: "" });
    expect(deleted.stdout).toBe('message template "weekly-reminder" (de) deleted from study "flu-watch"\n');

    const actions = await database.db.select().from(auditLog).where(eq(auditLog.studyKey, "flu-watch"));
    expect(actions.map((entry) => `${entry.actor} ${entry.action} ${entry.target}`)).toEqual([
      "operator-cli message-template.set weekly-reminder/en",
      "operator-cli message-template.set weekly-reminder/de",
      "operator-cli message-template.set weekly-reminder/de",
      "operator-cli message-template.delete weekly-reminder/de",
    ]);
  });

  it("refuses bad templates, files, languages and unknown studies with exit code 1 and one message", async () => {
    const cases: [string[], RegExp][] = [
      [
        set("en", "go-template.txt"),
        /^--body-file go-template\.txt: \{\{\.profileAlias\}\} at line 1, column 7 is not a placeholder/,
      ],
      [set("en", "reminder-en.txt", "Hi {{name}}"), /^subject: \{\{name\}\} at line 1, column 4 is not a placeholder/],
      [set("en", "missing.txt"), /^cannot read body file missing\.txt: no such file/],
      [set("english", "reminder-en.txt"), /--language must be a language tag such as en or de-CH/],
      [["message-template:list", "--study", "nope"], /^study "nope" not found/],
      [
        ["message-template:delete", "--study", "flu-watch", "--type", "weekly-reminder", "--language", "fr"],
        /^message template "weekly-reminder" in language "fr" not found in study "flu-watch"/,
      ],
      [
        ["message-template:set", "--study", "flu-watch", "--type", "t", "--language", "en", "--subject", "s"],
        /--body-file/,
      ],
    ];
    for (const [argv, message] of cases) {
      const result = await run([...argv, "--json"]);
      expect(result.exitCode, argv.join(" ")).toBe(1);
      expect(JSON.parse(result.stderr).error, argv.join(" ")).toMatch(message);
      expect(result.stdout).toBe("");
    }
  });
});
