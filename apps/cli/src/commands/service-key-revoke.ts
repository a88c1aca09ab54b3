import { Option } from "commander";
import { z } from "zod";
import { revokeApiKey } from "@studyflow/domain/access";
import { defineCommand, type CliContext } from "../command-definition";
import { UPLOADED_BY } from "../command-support";
import { text } from "../flag-values";

export interface ServiceKeyRevokeInput {
  id: string;
}

/** Key ids are UUIDs (as service-key:list shows them); stored in lower case. */
const keyId = text.transform((raw, ctx) => {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(raw)) {
    ctx.addIssue({ code: "custom", message: `must be a key id (UUID, see service-key:list), got "${raw}"` });
    return z.NEVER;
  }
  return raw.toLowerCase();
});

export async function serviceKeyRevoke(ctx: CliContext, input: ServiceKeyRevokeInput) {
  const now = new Date(ctx.clock());
  const key = await revokeApiKey(ctx.database.db, input.id, UPLOADED_BY, now);
  const revokedAt = key.revokedAt ?? now;
  const data = { revoked: { id: key.id, subject: key.subject, label: key.label, keyPrefix: key.keyPrefix, revokedAt } };
  ctx.output.result(data, [
    `service key ${key.id} (${key.keyPrefix}…, subject ${key.subject}) revoked at ${revokedAt.toISOString()}`,
  ]);
  return data;
}

export const serviceKeyRevokeCommand = defineCommand({
  name: "service-key:revoke",
  summary: "revoke a service account API key at once",
  flags: () => [new Option("--id <ID>", "the key's id (from service-key:list)").makeOptionMandatory()],
  values: z.object({ id: keyId }),
  uses: "database",
  run: serviceKeyRevoke,
});
