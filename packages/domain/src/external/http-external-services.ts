import http from "node:http";
import https from "node:https";
import type { ExternalServiceCaller } from "../rules/postgres-engine-services";
import { loadExternalServicesFile, type ExternalServiceConfig } from "./external-service-config";

/** Replies larger than this are refused: a study's service answers with a state and a few reports. */
const MAX_REPLY_BYTES = 1024 * 1024;

export interface HttpExternalServicesOptions {
  /** Sent as `instanceID` in every body, as the reference does, so a service can tell deployments apart. */
  instanceId: string;
}

interface ServiceSlot {
  config: ExternalServiceConfig;
  inFlight: number;
  agent: http.Agent;
}

/**
 * The engine's external-service port over HTTP(S): POSTs the event body (plus `apiKey` and
 * `instanceID`) as JSON to the service's url + route and resolves with the parsed JSON reply. A
 * timeout, a non-2xx status, a reply that is not JSON, an unknown service and a full service
 * (maxConcurrentCalls in flight) all reject with a message saying which, so the rule fails
 * readably instead of the event hanging.
 */
export function createHttpExternalServiceCaller(
  services: readonly ExternalServiceConfig[],
  options: HttpExternalServicesOptions,
): ExternalServiceCaller & { close: () => void } {
  const slots = new Map<string, ServiceSlot>(
    services.map((config) => {
      const secure = config.url.startsWith("https:");
      const agentOptions = { keepAlive: true, maxSockets: config.maxConcurrentCalls, ...config.tls };
      return [
        config.name,
        { config, inFlight: 0, agent: secure ? new https.Agent(agentOptions) : new http.Agent(agentOptions) },
      ];
    }),
  );

  const call: ExternalServiceCaller = async (serviceName, route, body) => {
    const slot = slots.get(serviceName);
    if (!slot) throw new Error(`external service "${serviceName}" is not configured`);
    if (slot.inFlight >= slot.config.maxConcurrentCalls) {
      throw new Error(`external service "${serviceName}" is busy (${slot.config.maxConcurrentCalls} calls in flight)`);
    }
    slot.inFlight += 1;
    try {
      return await post(slot, route, body, options.instanceId);
    } finally {
      slot.inFlight -= 1;
    }
  };
  return Object.assign(call, {
    close: () => {
      for (const slot of slots.values()) slot.agent.destroy();
    },
  });
}

function targetUrl(base: string, route: string): URL {
  // The route is relative to the configured URL, which may itself have a path.
  const url = new URL(base);
  if (route !== "") url.pathname = `${url.pathname.replace(/\/$/, "")}/${route}`;
  return url;
}

function post(slot: ServiceSlot, route: string, body: unknown, instanceId: string): Promise<unknown> {
  const { config } = slot;
  const url = targetUrl(config.url, route);
  const payload = JSON.stringify({
    ...(body as Record<string, unknown>),
    ...(config.apiKey === undefined ? {} : { apiKey: config.apiKey }),
    instanceID: instanceId,
  });
  const transport = url.protocol === "https:" ? https : http;
  const name = config.name;
  return new Promise((resolve, reject) => {
    const request = transport.request(url, {
      method: "POST",
      agent: slot.agent,
      signal: AbortSignal.timeout(config.timeout * 1000),
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json",
        "Content-Length": Buffer.byteLength(payload),
        ...(config.apiKey === undefined ? {} : { "Api-Key": config.apiKey }),
      },
    });
    request.on("error", (error) => {
      const timedOut = error.name === "AbortError" || (error as { code?: string }).code === "ABORT_ERR";
      reject(
        new Error(
          timedOut
            ? `external service "${name}" did not answer within ${config.timeout} s`
            : `external service "${name}" could not be reached: ${error.message}`,
        ),
      );
    });
    request.on("response", (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_REPLY_BYTES) {
          request.destroy();
          reject(new Error(`external service "${name}" answered with more than ${MAX_REPLY_BYTES} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      response.on("error", (error) => reject(new Error(`external service "${name}" reply failed: ${error.message}`)));
      response.on("end", () => {
        const status = response.statusCode ?? 0;
        if (status < 200 || status > 299) {
          reject(new Error(`external service "${name}" answered HTTP ${status}`));
          return;
        }
        const text = Buffer.concat(chunks).toString("utf8");
        try {
          resolve(text.trim() === "" ? null : (JSON.parse(text) as unknown));
        } catch {
          reject(new Error(`external service "${name}" answered with malformed JSON`));
        }
      });
    });
    request.end(payload);
  });
}

/**
 * The caller for an app's configuration: the services of EXTERNAL_SERVICES_FILE, or none. Throws
 * ExternalServicesConfigError on a bad file, so the app does not start half-configured.
 */
export async function externalServiceCallerFromConfig(config: {
  EXTERNAL_SERVICES_FILE?: string | undefined;
  INSTANCE_ID: string;
}): Promise<(ExternalServiceCaller & { close: () => void }) | undefined> {
  if (config.EXTERNAL_SERVICES_FILE === undefined) return undefined;
  const services = await loadExternalServicesFile(config.EXTERNAL_SERVICES_FILE);
  return createHttpExternalServiceCaller(services, { instanceId: config.INSTANCE_ID });
}
