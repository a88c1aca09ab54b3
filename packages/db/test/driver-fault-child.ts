// A process that keeps a studyflow database pool busy with small queries until SIGTERM, then
// prints how many succeeded and failed. The fault test terminates its backends meanwhile.
import { sql as drizzleSql } from "drizzle-orm";
import { createDb } from "../src/client";

const database = createDb(process.env.DATABASE_URL ?? "", { max: 4, applicationName: "sf-driver-fault" });
let ok = 0;
let failed = 0;
async function loop(useDrizzle: boolean) {
  for (;;) {
    try {
      if (useDrizzle) await database.db.execute(drizzleSql`select 1 as x`);
      else await database.sql`select 1 as x`;
      ok++;
    } catch {
      failed++;
    }
  }
}
for (let i = 0; i < 8; i++) void loop(i % 2 === 0);
process.on("SIGTERM", () => {
  process.stdout.write(`${JSON.stringify({ ok, failed })}\n`);
  process.exit(0);
});
process.stdout.write("ready\n");
