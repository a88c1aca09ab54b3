import { Option } from "commander";
import { z } from "zod";
import { deleteServiceAccount, readServiceAccount } from "@studyflow/domain/management-users";
import { defineCommand, type CliContext } from "../command-definition";
import { UPLOADED_BY } from "../command-support";
import { rowId } from "../flag-values";

export interface ServiceAccountIdInput {
  id: string;
}

export const serviceAccountIdFlag = () =>
  new Option("--id <ID>", "the service account's id (from service-account:list)").makeOptionMandatory();
export const serviceAccountIdValues = z.object({ id: rowId("a service account", "service-account:list") });

export async function serviceAccountDelete(ctx: CliContext, input: ServiceAccountIdInput) {
  const db = ctx.database.db;
  // Read first only for the message; the deletion locks and checks the account again.
  const account = await readServiceAccount(db, input.id);
  const removed = await deleteServiceAccount(db, input.id, UPLOADED_BY, new Date(ctx.clock()));
  const data = { deleted: { id: account.id, label: account.label, ...removed } };
  ctx.output.result(data, [
    `service account ${account.id} (${account.label}) deleted with ${removed.apiKeys} API key(s), ` +
      `${removed.permissions} permission(s) and ${removed.appRoles} app role(s); its keys stop working now`,
  ]);
  return data;
}

export const serviceAccountDeleteCommand = defineCommand({
  name: "service-account:delete",
  summary: "delete a service account with its API keys, permissions and app roles (audited)",
  flags: () => [serviceAccountIdFlag()],
  values: serviceAccountIdValues,
  uses: "database",
  run: serviceAccountDelete,
});
