/**
 * The import map of studyflow (docs/architecture.md), checked by `npm run lint`: a file that
 * imports upwards, sideways between folders of one layer, or round in a circle fails CI.
 *
 * Each table below lists a package's folders in layers, lowest first. A folder may import its own
 * files, the package's top-level files (errors.ts, app-env.ts, …) and folders of lower layers only.
 * A folder missing from its table fails too: place a new folder in a layer when you add it.
 */

/** Which workspace packages each package may import (none: it stands alone). */
const PACKAGE_IMPORTS = {
  config: [],
  engine: [],
  "go-template": [],
  "case-export": [],
  db: [],
  queue: ["config"],
  domain: ["db", "engine", "case-export", "go-template"],
  presenters: ["db", "domain", "engine"],
  testkit: ["db", "engine"],
};

/** Folders of packages/*\/src and apps/*\/src in layers, lowest first. */
const FOLDER_LAYERS = {
  "packages/domain/src": [
    // leaves: import nothing else of the domain
    ["foundation", "mail", "files", "case-filter"],
    ["cache"],
    ["access", "studies", "rules"],
    ["management-users", "participant-sessions", "study-config", "surveys", "external"],
    ["participants"],
    ["events", "data-explorer"],
    ["participant-accounts", "idempotency", "survey-context", "participant-files", "participant-data"],
    ["participant-sign-in", "external-identity", "notifications", "messages", "tasks"],
    ["outbox", "bulk", "exports"],
    // orchestration: above the services it calls
    ["task-pipeline", "study-setup"],
    ["timer"],
    // the import of a CASE deployment writes through services of every layer
    ["case-import"],
  ],
  "packages/engine/src": [["actions", "expressions"]],
  "packages/db/src": [["schema"]],
  "apps/api/src": [["auth", "rate-limit"], ["middleware"], ["case-compat"], ["routes"], ["console"]],
  "apps/worker/src": [["schedules", "outbox"], ["processors"]],
  "apps/cli/src": [["demo"], ["commands"]],
};

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");

function packageRules() {
  return Object.entries(PACKAGE_IMPORTS).map(([name, allowed]) => ({
    name: `package-${name}`,
    comment: `packages/${name} may import ${allowed.length ? allowed.join(", ") : "no other workspace package"}`,
    severity: "error",
    from: { path: `^packages/${escape(name)}/` },
    to: { path: "^(packages|apps)/", pathNot: `^packages/(${[name, ...allowed].map(escape).join("|")})/` },
  }));
}

function folderRules() {
  const rules = [];
  for (const [base, layers] of Object.entries(FOLDER_LAYERS)) {
    const known = layers.flat();
    rules.push({
      name: "folder-not-in-map",
      comment: `every folder of ${base} has a layer in .dependency-cruiser.cjs`,
      severity: "error",
      from: { path: `^${escape(base)}/[^/]+/`, pathNot: `^${escape(base)}/(${known.map(escape).join("|")})/` },
      to: {},
    });
    layers.forEach((layer, index) => {
      const below = layers.slice(0, index).flat();
      for (const folder of layer) {
        rules.push({
          name: "folder-layers",
          comment: `${base}/${folder} may import only ${below.length ? below.join(", ") : "no other folder"}`,
          severity: "error",
          from: { path: `^${escape(base)}/${escape(folder)}/` },
          to: {
            path: `^${escape(base)}/[^/]+/`,
            pathNot: `^${escape(base)}/(${[folder, ...below].map(escape).join("|")})/`,
          },
        });
      }
    });
  }
  return rules;
}

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "a file may not import a file that imports it back, directly or through others",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "packages-not-apps",
      comment: "packages never import apps",
      severity: "error",
      from: { path: "^packages/" },
      to: { path: "^apps/" },
    },
    {
      name: "apps-not-each-other",
      comment: "an app never imports another app (code they share lives in a package)",
      severity: "error",
      from: { path: "^apps/([^/]+)/" },
      to: { path: "^apps/", pathNot: "^apps/$1/" },
    },
    {
      name: "routes-not-drizzle",
      comment: "routes call domain functions; queries live in the domain",
      severity: "error",
      from: { path: "^apps/api/src/routes/" },
      to: { path: "(^|/)node_modules/drizzle-orm/|^packages/db/src/schema/" },
    },
    ...packageRules(),
    ...folderRules(),
  ],
  options: {
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(test|bench)/" },
    // workspace packages resolve to their TypeScript source through their package.json exports
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "types", "node", "default"],
      extensions: [".ts", ".js", ".json"],
    },
  },
};
