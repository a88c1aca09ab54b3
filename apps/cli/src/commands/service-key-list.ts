import { Option } from "commander";
import { z } from "zod";
import { apiKeyStatus, listApiKeys } from "@studyflow/domain/access";
import { tableLines } from "../output";
import { defineCommand, type CliContext } from "../command-definition";
import { text } from "../flag-values";

export interface ServiceKeyListInput {
  subject?: string;
}

const COLUMNS = ["id", "subject", "label", "prefix", "created", "expires", "revoked", "last used", "status"] as const;

const shown = (date: Date | null) => date?.toISOString() ?? "-";

export async function serviceKeyList(ctx: CliContext, input: ServiceKeyListInput) {
  const now = new Date(ctx.clock());
  const keys = await listApiKeys(ctx.database.db, input);
  const apiKeys = keys.map((key) => ({ ...key, status: apiKeyStatus(key, now) }));
  const data = { apiKeys };
  const scope = input.subject === undefined ? "" : ` of subject "${input.subject}"`;
  ctx.output.result(data, [
    `${apiKeys.length} service key${apiKeys.length === 1 ? "" : "s"}${scope} (most recent first)`,
    ...(apiKeys.length === 0
      ? []
      : tableLines([
          COLUMNS,
          ...apiKeys.map((key) => [
            key.id,
            key.subject,
            key.label || "-",
            `${key.keyPrefix}…`,
            shown(key.createdAt),
            shown(key.expiresAt),
            shown(key.revokedAt),
            shown(key.lastUsedAt),
            key.status,
          ]),
        ])),
  ]);
  return data;
}

export const serviceKeyListCommand = defineCommand({
  name: "service-key:list",
  summary: "list service account API keys (never the keys themselves), most recent first",
  flags: () => [new Option("--subject <S>", "only the keys of this subject")],
  values: z
    .object({ subject: text.optional() })
    .transform(({ subject }): ServiceKeyListInput => (subject === undefined ? {} : { subject })),
  uses: "database",
  run: serviceKeyList,
});
