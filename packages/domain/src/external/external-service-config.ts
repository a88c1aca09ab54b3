import { readFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";

/**
 * One external service a study's rules may call by name (EXTERNAL_EVENT_HANDLER,
 * externalEventEval). The field names are the reference platform's, so its service lists can be
 * reused as they are; `maxConcurrentCalls` is ours.
 */
const serviceSchema = z.object({
  name: z.string().min(1, "name must not be empty"),
  url: z.url({ protocol: /^https?$/, error: "url must be an http:// or https:// URL" }),
  /** Sent as the `Api-Key` header, as the reference does, and as `apiKey` in the body for services that read it there. */
  apiKey: z.string().optional(),
  /**
   * Seconds before a call is abandoned. The call runs while the participant's row is locked, so
   * the ceiling is low: a slow service must not hold a participant for long.
   */
  timeout: z.number().positive().max(30).default(5),
  /**
   * Calls in flight at once per process; one more fails at once instead of waiting, because a
   * waiting call would hold its participant's row lock too.
   */
  maxConcurrentCalls: z.number().int().min(1).max(256).default(16),
  /** Files of a custom CA and of a client certificate (mutual TLS); relative to the config file. */
  mTLSConfig: z
    .object({ caFile: z.string().min(1), certFile: z.string().min(1), keyFile: z.string().min(1) })
    .partial()
    .refine((tls) => (tls.certFile === undefined) === (tls.keyFile === undefined), {
      message: "certFile and keyFile go together",
    })
    .optional(),
});

const fileSchema = z
  .object({ externalServices: z.array(serviceSchema) })
  .refine((file) => new Set(file.externalServices.map((s) => s.name)).size === file.externalServices.length, {
    message: "service names must be unique",
  });

export type ExternalServiceConfig = z.output<typeof serviceSchema> & {
  /** The PEM contents of mTLSConfig's files, read at load time so a missing file stops the start. */
  tls?: { ca?: string; cert?: string; key?: string };
};

export class ExternalServicesConfigError extends Error {
  override readonly name = "ExternalServicesConfigError";
}

/**
 * Reads the external-services file (YAML or JSON: JSON is YAML too), validates it and loads the
 * certificate files it names. Any problem is one error naming the file and the field.
 */
export async function loadExternalServicesFile(file: string): Promise<ExternalServiceConfig[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new ExternalServicesConfigError(`cannot read external services file ${file}: ${(error as Error).message}`);
  }
  // yaml is loaded here, for a deployment that has such a file: it took 50-80 ms of every API and
  // worker start on a 2-core machine (docs/benchmarks.md, "Start-up")
  const { parse: parseYaml } = await import("yaml");
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (error) {
    throw new ExternalServicesConfigError(
      `external services file ${file} is not YAML/JSON: ${(error as Error).message}`,
    );
  }
  const result = fileSchema.safeParse(parsed);
  if (!result.success) {
    const issues = result.error.issues.map((issue) => `${issue.path.join(".") || "(file)"}: ${issue.message}`);
    throw new ExternalServicesConfigError(`invalid external services file ${file}: ${issues.join("; ")}`);
  }
  const directory = path.dirname(file);
  const readPem = async (name: string | undefined) => {
    if (name === undefined) return undefined;
    try {
      return await readFile(path.resolve(directory, name), "utf8");
    } catch (error) {
      throw new ExternalServicesConfigError(`cannot read certificate file ${name}: ${(error as Error).message}`);
    }
  };
  return Promise.all(
    result.data.externalServices.map(async (service) => {
      if (!service.mTLSConfig) return service;
      const [ca, cert, key] = await Promise.all([
        readPem(service.mTLSConfig.caFile),
        readPem(service.mTLSConfig.certFile),
        readPem(service.mTLSConfig.keyFile),
      ]);
      return {
        ...service,
        tls: { ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) },
      };
    }),
  );
}
