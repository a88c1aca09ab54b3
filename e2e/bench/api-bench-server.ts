/**
 * One HTTP server of the API load benchmark (api-bench.ts), in its own process so that the load
 * generator's CPU is not counted against it:
 *
 *   studyflow  the real API (startApiServer), configured from the environment as in production
 *   bare       the floor: Hono + postgres.js making the same writes in one transaction, nothing else (what
 *              the bench study's rules write, computed by hand)
 *   plain      a plain Hono app answering GET /healthz
 *
 * Usage: tsx api-bench-server.ts <mode>; DATABASE_URL, REDIS_URL, PORT from the environment. The
 * process prints "listening" once it accepts connections.
 */
import { serve } from "@hono/node-server";
import { Hono, type Context } from "hono";
import postgres from "postgres";
import { startApiServer } from "@studyflow/api/server";
import { loadConfig } from "@studyflow/api/config";
import { createLogger } from "@studyflow/api/logger";
import { BARE_APPLICATION_NAME, STUDYFLOW_APPLICATION_NAME } from "./api-bench-cpu";

const mode = process.argv[2];
const port = Number(process.env.PORT ?? 0);
const databaseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const poolSize = Number(process.env.DATABASE_POOL_SIZE ?? 10);

interface BenchItem {
  key: string;
  response?: { key?: string; items?: BenchItem[] };
  items?: BenchItem[];
}
interface BenchResponse {
  key: string;
  versionId?: string;
  openedAt?: number;
  submittedAt?: number;
  responses?: BenchItem[];
}

/** The bench study's responseHasKeysAny("weekly.Q1", "rg.mcg", "fever"), written out by hand. */
function hasFever(response: BenchResponse): boolean {
  const q1 = response.responses?.find((item) => item.key === "weekly.Q1")?.response;
  const group = q1?.key === "rg" ? q1.items?.find((item) => item.key === "mcg") : undefined;
  return group?.items?.some((item) => item.key === "fever") ?? false;
}

/** The bare endpoints the benchmark compares studyflow's with: the same writes, in one transaction. */
function bareApp() {
  const sql = postgres(databaseUrl, {
    max: poolSize,
    onnotice: () => undefined,
    fetch_types: false,
    // the benchmark finds its backends by this name, to count their CPU
    connection: { application_name: BARE_APPLICATION_NAME },
  });
  const app = new Hono();
  // submit: lock the participant, write what the bench study's SUBMIT rules write (api-bench.ts
  // RULES: the weekly survey replaced by a new one, 6 to 13 days out; the symptoms flag from
  // Q1; the last submission), insert the response with the columns studyflow fills
  app.post("/v1/studies/:studyKey/participants/:participantId/responses", async (c) => {
    const { studyKey, participantId } = c.req.param();
    const response = await c.req.json<BenchResponse>();
    const now = Math.floor(Date.now() / 1000);
    const symptoms = hasFever(response) ? "yes" : "no";
    const written = await sql.begin(async (tx) => {
      const [row] = await tx`select id from participants
        where study_key = ${studyKey} and participant_id = ${participantId} for update`;
      if (!row) return false;
      await tx`update participants set
          flags = flags || jsonb_build_object('symptoms', ${symptoms}::text),
          assigned_surveys = coalesce((select jsonb_agg(s) from jsonb_array_elements(assigned_surveys) as s
              where s ->> 'surveyKey' <> ${response.key}), '[]'::jsonb)
            || jsonb_build_array(jsonb_build_object('surveyKey', ${response.key}::text,
              'validFrom', ${now + 6 * 86_400}::bigint, 'validUntil', ${now + 13 * 86_400}::bigint, 'category', 'normal')),
          last_submissions = last_submissions || jsonb_build_object(${response.key}::text, ${now}::bigint),
          modified_at = ${now}, version = version + 1
        where id = ${row.id}`;
      await tx`insert into survey_responses
          (study_key, participant_id, key, version_id, opened_at, submitted_at, arrived_at, responses, context)
        values (${studyKey}, ${participantId}, ${response.key}, ${response.versionId ?? ""}, ${response.openedAt ?? 0},
          ${response.submittedAt ?? 0}, ${now}, ${JSON.stringify(response.responses ?? [])}::text::jsonb, '{}'::jsonb)`;
      return true;
    });
    return written ? c.json({ message: "response submitted" }) : c.json({ error: "participant not found" }, 404);
  });
  // leave / enter: lock the participant, update its status and what the study's LEAVE rule (the
  // weekly survey removed) or ENTER rule (the intake survey replaced, due within 30 days) writes
  const statusChange = (status: string, removed: string, added?: string) => async (c: Context) => {
    const studyKey = c.req.param("studyKey") ?? "";
    const { participantId } = await c.req.json<{ participantId: string }>();
    const now = Math.floor(Date.now() / 1000);
    const survey = added
      ? sql`jsonb_build_array(jsonb_build_object('surveyKey', ${added}::text, 'validFrom', ${now}::bigint,
          'validUntil', ${now + 30 * 86_400}::bigint, 'category', 'prio'))`
      : sql`'[]'::jsonb`;
    const written = await sql.begin(async (tx) => {
      const [row] = await tx`select id from participants
        where study_key = ${studyKey} and participant_id = ${participantId} for update`;
      if (!row) return false;
      await tx`update participants set study_status = ${status},
          assigned_surveys = coalesce((select jsonb_agg(s) from jsonb_array_elements(assigned_surveys) as s
            where s ->> 'surveyKey' <> ${removed}), '[]'::jsonb) || ${survey},
          modified_at = ${now}, version = version + 1
        where id = ${row.id}`;
      return true;
    });
    return written ? c.json({ assignedSurveys: [] }) : c.json({ error: "participant not found" }, 404);
  };
  app.post("/v1/study-service/events/:studyKey/leave", statusChange("exited", "weekly"));
  app.post("/v1/study-service/events/:studyKey/enter", statusChange("active", "intake", "intake"));
  app.get("/healthz", (c) => c.json({ status: "ok" }));
  return app;
}

function listen(fetch: (request: Request) => Response | Promise<Response>) {
  serve({ fetch, port, hostname: "127.0.0.1" }, () => console.log("listening"));
  // an exit rather than death by the signal, so that --cpu-prof writes its profile
  process.on("SIGTERM", () => process.exit(0));
}

if (mode === "studyflow") {
  const config = loadConfig(process.env);
  // Production logging (JSON lines at the configured level) to stdout, which the benchmark discards.
  const logger = createLogger(config.LOG_LEVEL, false);
  const api = startApiServer({
    config: { ...config, HOST: "127.0.0.1" },
    logger,
    applicationName: STUDYFLOW_APPLICATION_NAME,
  });
  // a graceful exit writes the CPU profile of --profile
  process.on("SIGTERM", () => void api.shutdown("SIGTERM"));
} else if (mode === "bare") {
  listen(bareApp().fetch);
} else if (mode === "plain") {
  const app = new Hono();
  app.get("/healthz", (c) => c.json({ status: "ok" }));
  listen(app.fetch);
} else {
  console.error("usage: api-bench-server.ts studyflow|bare|plain");
  process.exit(2);
}
