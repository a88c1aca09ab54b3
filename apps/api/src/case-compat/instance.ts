import { Invalid } from "@studyflow/domain/errors";
import type { ApiConfig } from "../config";

/**
 * Checks a CASE client's `instanceID` (body or query) against INSTANCE_ID. case-backend serves
 * several instances from one database and picks one by this value; studyflow serves one, so a
 * value naming another instance is a misconfigured client, refused with 400 rather than served
 * this instance's data. An absent or empty value is accepted (case-backend's defaults fill it in).
 */
export function checkInstanceId(config: Pick<ApiConfig, "INSTANCE_ID">, instanceId: string | undefined | null): void {
  if (instanceId === undefined || instanceId === null || instanceId === "") return;
  if (instanceId !== config.INSTANCE_ID) {
    throw new Invalid(
      `instanceID: unknown instance "${instanceId.slice(0, 100)}"; this server is "${config.INSTANCE_ID}"`,
    );
  }
}
