import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { loadConfigOrExit } from "@studyflow/config";
import { createDb } from "@studyflow/db";
import { loadConfig, processEnv } from "../config";
import { seedDemo } from "./demo-seed";

/**
 * `npm run demo:seed -- [--out FILE] [--participants N]`: sets up the demo study and writes the
 * tokens the walkthrough needs to FILE (compose: the demo volume), printing them too.
 */
const { values } = parseArgs({
  options: {
    out: { type: "string", default: "var/demo/demo.json" },
    participants: { type: "string", default: "10000" },
  },
});
const count = Number(values.participants);
if (!Number.isInteger(count) || count < 0 || count > 5_000_000) {
  console.error("--participants must be a whole number from 0 to 5,000,000");
  process.exit(1);
}
const config = loadConfigOrExit(() => loadConfig(processEnv()));
const database = createDb(config.DATABASE_URL, { max: 2, applicationName: "studyflow-demo-seed" });
try {
  const demo = await seedDemo(database, config, count);
  await mkdir(path.dirname(values.out), { recursive: true });
  await writeFile(values.out, `${JSON.stringify(demo, null, 2)}\n`, "utf8");
  console.log(`demo study "${demo.studyKey}" is ready; walkthrough values written to ${values.out}:`);
  console.log(JSON.stringify(demo, null, 2));
} catch (error) {
  console.error("demo seed failed:", error instanceof Error ? error.message : error);
  process.exitCode = 1;
} finally {
  await database.close();
}
