import type { z } from "zod";

export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`invalid configuration:\n${issues.map((issue) => `  - ${issue}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

/**
 * Parses an environment with a zod object schema whose keys are the variable names, and
 * reports every bad or missing variable by name (never its value: it may be a secret).
 */
export function parseEnv<S extends z.ZodObject>(schema: S, env: Record<string, string | undefined>): z.output<S> {
  // An empty value is a mistake (`PORT=` would otherwise listen on a random port), not "unset".
  const empty = Object.keys(schema.shape).filter((name) => env[name] !== undefined && env[name]?.trim() === "");
  const result = schema.safeParse(env);
  const issues = empty.map((name) => `${name}: is empty; set a value or leave the variable out`);
  if (!result.success) {
    for (const issue of result.error.issues) {
      const name = issue.path.join(".") || "(environment)";
      if (empty.includes(name)) continue;
      issues.push(`${name}: ${env[name] === undefined ? "is required" : describeProblem(issue)}`);
    }
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return (result as { data: z.output<S> }).data;
}

/** What is wrong with a value that is set, without repeating the value (it may be a secret). */
function describeProblem(issue: z.core.$ZodIssue): string {
  if (issue.code === "invalid_type") return `must be a ${issue.expected === "number" ? "number" : issue.expected}`;
  return issue.message;
}
