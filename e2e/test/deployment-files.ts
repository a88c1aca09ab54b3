/**
 * Reading docker-compose.yml and the Dockerfile the way Docker would, for the checks that hold
 * them to the code without a Docker engine (compose-check.test.ts, compiled-entries.test.ts).
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { ENTRIES, entryOutput, packageOfSpecifier, type EntryName } from "../../esbuild.config";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

export const readRepoFile = (relative: string): string => readFileSync(path.join(REPO_ROOT, relative), "utf8");

// ---- docker-compose.yml ----------------------------------------------------------------------

export type ComposeVolume = string | { type?: string; source?: string; target: string };
export type ComposePort = string | number | { target: number; published?: string | number };

export interface ComposeService {
  build?: unknown;
  image?: string;
  command?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  env_file?: unknown;
  ports?: ComposePort[];
  volumes?: ComposeVolume[];
  healthcheck?: { test?: string | string[]; disable?: boolean };
  restart?: string;
  profiles?: string[];
  user?: string;
  stop_grace_period?: string;
  init?: boolean;
  deploy?: { replicas?: number };
  depends_on?: Record<string, { condition: string }> | string[];
}

export interface Compose {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

/**
 * The compose file with its anchors and `<<` merges resolved, as Compose reads it; with override
 * files (`-f docker-compose.yml -f docker-compose.demo.yml`), merged into it in order.
 */
export function loadCompose(files: readonly string[] = ["docker-compose.yml"]): Compose {
  const [first = "docker-compose.yml", ...overrides] = files;
  return overrides.reduce<Compose>(
    (merged, file) => mergeComposeFiles(merged, loadComposeFile(file)) as Compose,
    loadComposeFile(first) as unknown as Compose,
  );
}

/**
 * The demo command's files, merged in this order, and its variables:
 * `docker compose --env-file docker-compose.demo.env -f docker-compose.yml -f docker-compose.demo.yml`.
 */
export const DEMO_COMPOSE_FILES = ["docker-compose.yml", "docker-compose.demo.yml"] as const;
export const DEMO_ENV_FILE = "docker-compose.demo.env";

/** One compose file as written (anchors resolved), nothing merged into it. */
export function loadComposeFile(file: string): Record<string, unknown> {
  return parse(readRepoFile(file), { merge: true }) as Record<string, unknown>;
}

/** Compose's merge of an override: mappings key by key, sequences appended, other values replaced. */
function mergeComposeFiles(base: unknown, override: unknown): unknown {
  if (Array.isArray(base) && Array.isArray(override)) return [...(base as unknown[]), ...(override as unknown[])];
  if (isMapping(base) && isMapping(override)) {
    const merged: Record<string, unknown> = { ...base };
    for (const [key, value] of Object.entries(override)) merged[key] = mergeComposeFiles(base[key], value);
    return merged;
  }
  return override;
}

const isMapping = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The variables compose interpolates a file with (shell, `.env`, `--env-file`). */
export type ComposeVariables = Record<string, string>;

/** An env file as `docker compose --env-file` reads it: `NAME=value` lines, `#` comments. */
export function readEnvFile(file: string): ComposeVariables {
  const variables: ComposeVariables = {};
  for (const line of readRepoFile(file).split(/\r?\n/)) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (match) variables[match[1] ?? ""] = (match[2] ?? "").trim().replace(/^(["'])(.*)\1$/, "$2");
  }
  return variables;
}

/** The variables a compose file requires (`${NAME:?message}`, `${NAME?message}`), each with its message. */
export function requiredVariables(file = "docker-compose.yml"): Map<string, string> {
  const required = new Map<string, string>();
  for (const match of readRepoFile(file).matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*):?\?([^}]*)\}/g)) {
    required.set(match[1] ?? "", match[2] ?? "");
  }
  return required;
}

/**
 * What an operator's `.env` gives docker-compose.yml: a fresh random value for each variable it
 * requires (hex, as the URL-embedded database password must be).
 */
export function freshComposeVariables(file = "docker-compose.yml"): ComposeVariables {
  return Object.fromEntries([...requiredVariables(file).keys()].map((name) => [name, randomBytes(32).toString("hex")]));
}

/** Thrown where compose would stop: a required variable is unset or empty. */
export class MissingComposeVariable extends Error {}

/**
 * `${NAME}`, `${NAME:-default}`, `${NAME-default}`, `${NAME:?message}`, `${NAME?message}` and `$$`
 * as Compose resolves them with `variables` set.
 */
export function interpolate(value: string, variables: ComposeVariables = {}): string {
  return value.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?])([^}]*))?\}/g,
    (
      match,
      name: string | undefined,
      colon: string | undefined,
      kind: string | undefined,
      text: string | undefined,
    ) => {
      if (match === "$$") return "$";
      const value = variables[name ?? ""];
      const missing = value === undefined || (colon === ":" && value === "");
      if (kind === "?" && missing)
        throw new MissingComposeVariable(`required variable ${name} is missing a value: ${text}`);
      if (kind === "-" && missing) return text ?? "";
      return value ?? "";
    },
  );
}

/** A service's environment, interpolated with `variables`: what its process sees from compose. */
export function serviceEnv(service: ComposeService, variables: ComposeVariables = {}): Record<string, string> {
  const raw = service.environment ?? {};
  const entries: [string, string][] = Array.isArray(raw)
    ? raw.map((item) => {
        const at = item.indexOf("=");
        return at === -1 ? [item, ""] : [item.slice(0, at), item.slice(at + 1)];
      })
    : Object.entries(raw).map(([key, value]) => [key, value === null ? "" : String(value)]);
  return Object.fromEntries(entries.map(([key, value]) => [key, interpolate(value, variables)]));
}

/** The command as the argument vector the entrypoint (tini) receives. */
export function serviceCommand(service: ComposeService): string[] {
  const command = service.command;
  if (command === undefined) return [];
  return Array.isArray(command) ? command : command.split(/\s+/).filter(Boolean);
}

export interface PublishedPort {
  host: string | undefined;
  container: number;
}

/** Short (`"8080:8080"`, `"127.0.0.1:8080:8080/tcp"`) and long port syntax. */
export function publishedPorts(service: ComposeService): PublishedPort[] {
  return (service.ports ?? []).map((port) => {
    if (typeof port === "object") {
      return { host: port.published === undefined ? undefined : String(port.published), container: port.target };
    }
    const parts = String(port)
      .replace(/\/(tcp|udp)$/, "")
      .split(":");
    const container = Number(parts.at(-1));
    return { host: parts.length > 1 ? parts.at(-2) : undefined, container };
  });
}

export interface Mount {
  source: string | undefined;
  target: string;
  named: boolean;
}

export function serviceMounts(service: ComposeService): Mount[] {
  return (service.volumes ?? []).map((volume) => {
    if (typeof volume === "object") {
      return { source: volume.source, target: volume.target, named: (volume.type ?? "volume") === "volume" };
    }
    const [source, target] = volume.split(":");
    if (target === undefined) return { source: undefined, target: source ?? "", named: false };
    return { source, target, named: !/^[./~]/.test(source ?? "") };
  });
}

/** "1m30s", "15s", "500ms" in milliseconds; Docker's default grace period when absent. */
export function durationMs(value: string | undefined): number {
  if (value === undefined) return 10_000;
  const unit: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
  let total = 0;
  for (const [, amount, suffix] of value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) {
    total += Number(amount) * (unit[suffix ?? "s"] ?? 0);
  }
  return total;
}

/** Which compiled entry a service's command runs (`node dist/api/index.js …`), if any. */
export function entryOfCommand(command: string[]): EntryName | undefined {
  const [program, file] = command;
  if (program !== "node" || file === undefined) return undefined;
  return (Object.keys(ENTRIES) as EntryName[]).find((name) => entryOutput(name) === file);
}

// ---- Dockerfile -------------------------------------------------------------------------------

export interface Instruction {
  keyword: string;
  args: string;
}

export interface Stage {
  name: string | undefined;
  /** The image after ARG substitution, or the earlier stage it builds on. */
  from: string;
  base: Stage | undefined;
  instructions: Instruction[];
}

export interface Dockerfile {
  args: Record<string, string>;
  stages: Stage[];
}

/** Instructions with line continuations joined and comments dropped; stages by FROM. */
export function parseDockerfile(text: string): Dockerfile {
  const logical: string[] = [];
  let pending = "";
  for (const line of text.split(/\r?\n/)) {
    if (/^\s*#/.test(line) || (pending === "" && line.trim() === "")) continue;
    if (line.endsWith("\\")) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    logical.push((pending + line).trim());
    pending = "";
  }
  if (pending.trim() !== "") logical.push(pending.trim());

  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  const substitute = (value: string) =>
    value.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_, name: string) => args[name] ?? "");
  for (const line of logical) {
    const [, keyword = "", rest = ""] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const upper = keyword.toUpperCase();
    if (upper === "FROM") {
      const words = rest.split(/\s+/).filter((word) => !word.startsWith("--"));
      const image = substitute(words[0] ?? "");
      const name = words[1]?.toUpperCase() === "AS" ? words[2] : undefined;
      const base = stages.find((stage) => stage.name !== undefined && stage.name.toLowerCase() === image.toLowerCase());
      stages.push({ name, from: image, base, instructions: [] });
    } else if (upper === "ARG" && stages.length === 0) {
      const at = rest.indexOf("=");
      if (at !== -1) args[rest.slice(0, at).trim()] = rest.slice(at + 1).trim();
    } else {
      stages.at(-1)?.instructions.push({ keyword: upper, args: rest });
    }
  }
  return { args, stages };
}

export function loadDockerfile(): Dockerfile {
  return parseDockerfile(readRepoFile("Dockerfile"));
}

/** A stage's instructions with those of the stages it builds on first. */
export function instructionsOf(stage: Stage): Instruction[] {
  return [...(stage.base ? instructionsOf(stage.base) : []), ...stage.instructions];
}

/** The variables a stage's ENV instructions set (`ENV A=1 B="two words"`; double quotes, no escapes). */
export function envOf(instructions: Instruction[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { keyword, args } of instructions) {
    if (keyword !== "ENV") continue;
    for (const [, name, quoted, bare] of args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=(?:"([^"\\]*)"|(\S*))/g)) {
      env[name!] = quoted ?? bare ?? "";
    }
  }
  return env;
}

/** The first image a stage chain starts from. */
export function baseImageOf(stage: Stage): string {
  return stage.base ? baseImageOf(stage.base) : stage.from;
}

/** `["a", "b"]` exec form as an array; shell form as the shell would get it. */
export function execForm(args: string): string[] {
  const trimmed = args.trim();
  if (trimmed.startsWith("[")) return JSON.parse(trimmed) as string[];
  return ["/bin/sh", "-c", trimmed];
}

export interface Copy {
  from: string | undefined;
  sources: string[];
  destination: string;
}

export function parseCopy(args: string): Copy {
  const words = args.split(/\s+/).filter(Boolean);
  const from = words.find((word) => word.startsWith("--from="))?.slice("--from=".length);
  const paths = words.filter((word) => !word.startsWith("--"));
  return { from, sources: paths.slice(0, -1), destination: paths.at(-1) ?? "" };
}

/** The working directory after a stage's instructions (relative WORKDIRs resolve). */
export function workdirOf(instructions: Instruction[]): string {
  let dir = "/";
  for (const { keyword, args } of instructions) {
    if (keyword === "WORKDIR") dir = path.posix.resolve(dir, args.trim());
  }
  return dir;
}

// ---- the workspace ----------------------------------------------------------------------------

export interface Workspace {
  dir: string;
  name: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

/** Every workspace package the root package.json's globs match (one level, as this repo uses). */
export function workspaces(): Workspace[] {
  const root = JSON.parse(readRepoFile("package.json")) as { workspaces: string[] };
  const dirs = root.workspaces.flatMap((pattern) => {
    if (!pattern.endsWith("/*")) return [pattern];
    const parent = pattern.slice(0, -2);
    return readdirSync(path.join(REPO_ROOT, parent), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${parent}/${entry.name}`);
  });
  return dirs
    .filter((dir) => existsSync(path.join(REPO_ROOT, dir, "package.json")))
    .map((dir) => {
      const manifest = JSON.parse(readRepoFile(`${dir}/package.json`)) as Partial<Workspace>;
      return {
        dir,
        name: manifest.name ?? dir,
        dependencies: manifest.dependencies ?? {},
        devDependencies: manifest.devDependencies ?? {},
      };
    });
}

/** The package a bare import names: `@scope/name/sub` → `@scope/name`, `name/sub` → `name`. */
export const packageOf = packageOfSpecifier;

/** Run by packagesLoadedBy: imports each argument, printing the node_modules packages every import loaded. */
const LOADED_PACKAGES_SCRIPT = `
import { registerHooks } from "node:module";
let loaded = new Set();
registerHooks({
  resolve(specifier, context, next) {
    const result = next(specifier, context);
    const inside = result.url.split("/node_modules/").at(-1);
    if (inside !== result.url) {
      const [scope, name] = inside.split("/");
      loaded.add(scope.startsWith("@") ? scope + "/" + name : scope);
    }
    return result;
  },
});
const found = {};
for (const specifier of process.argv.slice(1)) {
  loaded = new Set();
  await import(specifier);
  found[specifier] = [...loaded].sort();
}
process.stdout.write(JSON.stringify(found));
`;

/**
 * The packages of node_modules that importing each of `specifiers` loads, as Node resolves them
 * from `cwd`: the package itself and every module it imports as it loads, in a process of its own.
 * A package is listed under the first specifier that loaded it only.
 */
export function packagesLoadedBy(specifiers: string[], cwd: string): Record<string, string[]> {
  const run = spawnSync(process.execPath, ["--input-type=module", "-e", LOADED_PACKAGES_SCRIPT, ...specifiers], {
    cwd,
    encoding: "utf8",
  });
  if (run.status !== 0) throw new Error(`importing ${specifiers.join(", ")} failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as Record<string, string[]>;
}
