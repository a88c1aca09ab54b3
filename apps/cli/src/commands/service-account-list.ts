import { z } from "zod";
import { listServiceAccounts } from "@studyflow/domain/management-users";
import { defineCommand, type CliContext } from "../command-definition";
import { tableLines } from "../output";

const COLUMNS = ["id", "label", "created", "created by", "description"] as const;

export async function serviceAccountList(ctx: CliContext) {
  const accounts = await listServiceAccounts(ctx.database.db);
  const data = {
    serviceAccounts: accounts.map((account) => ({
      id: account.id,
      label: account.label,
      description: account.description,
      createdBy: account.createdBy,
      createdAt: account.createdAt,
    })),
  };
  ctx.output.result(data, [
    `${accounts.length} service account${accounts.length === 1 ? "" : "s"} (oldest first)`,
    ...(accounts.length === 0
      ? []
      : tableLines([
          COLUMNS,
          ...accounts.map((account) => [
            account.id,
            account.label,
            account.createdAt.toISOString(),
            account.createdBy,
            account.description || "-",
          ]),
        ])),
  ]);
  return data;
}

export const serviceAccountListCommand = defineCommand({
  name: "service-account:list",
  summary: "list the service accounts, oldest first",
  flags: () => [],
  values: z.object({}),
  uses: "database",
  run: (ctx) => serviceAccountList(ctx),
});
