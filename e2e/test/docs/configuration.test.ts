/**
 * docs/configuration.md lists exactly the variables the apps accept: every name each app's zod
 * schema reads is in a table row that names the app under "read by", and every row names a
 * variable the schemas of the apps it names read. A variable added to a schema without a line
 * here, or documented for an app that ignores it, fails with its name.
 */
import { describe, expect, it } from "vitest";
import { configSchema as apiSchema } from "@studyflow/api/config";
import { configSchema as cliSchema } from "../../../apps/cli/src/config";
import { configSchema as workerSchema } from "../../../apps/worker/src/config";
import { readDocument } from "./documents";

const APPS = { api: apiSchema, worker: workerSchema, cli: cliSchema } as const;
type App = keyof typeof APPS;

/** `| \`NAME\` | api, worker | default | meaning |` rows: each variable with the apps that read it. */
export function documentedVariables(text: string): Map<string, Set<string>> {
  const variables = new Map<string, Set<string>>();
  for (const match of text.matchAll(/^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|([^|]*)\|/gm)) {
    const apps = (match[2] ?? "")
      .split(",")
      .map((app) => app.trim())
      .filter((app) => app !== "");
    const name = match[1] ?? "";
    if (variables.has(name)) throw new Error(`docs/configuration.md lists ${name} twice`);
    variables.set(name, new Set(apps));
  }
  return variables;
}

describe("docs/configuration.md", () => {
  const documented = documentedVariables(readDocument("docs/configuration.md"));

  it("names only apps that exist under 'read by'", () => {
    const unknown = [...documented].flatMap(([name, apps]) =>
      [...apps].filter((app) => !(app in APPS)).map((app) => `${name}: ${app}`),
    );
    expect(unknown).toEqual([]);
    expect(documented.size).toBeGreaterThan(40);
  });

  it.each(Object.keys(APPS) as App[])("documents every variable the %s reads, and no other for it", (app) => {
    const accepted = Object.keys(APPS[app].shape).sort();
    const listed = [...documented].filter(([, apps]) => apps.has(app)).map(([name]) => name);
    expect({
      "read by the app but not documented for it": accepted.filter((name) => !listed.includes(name)),
      "documented for the app but not read by it": listed.filter((name) => !accepted.includes(name)).sort(),
    }).toEqual({ "read by the app but not documented for it": [], "documented for the app but not read by it": [] });
  });

  it("reads the rows of the tables and refuses a variable listed twice", () => {
    const rows =
      "| `PORT` | api | `8080` | where |\n| `REDIS_URL` | api, worker, cli | x | y |\n| variable | read by |";
    expect(documentedVariables(rows)).toEqual(
      new Map([
        ["PORT", new Set(["api"])],
        ["REDIS_URL", new Set(["api", "worker", "cli"])],
      ]),
    );
    expect(() => documentedVariables("| `PORT` | api | | |\n| `PORT` | worker | | |")).toThrow(/PORT twice/);
  });
});
