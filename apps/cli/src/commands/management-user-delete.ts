import { readManagementUser, removeManagementUser } from "@studyflow/domain/management-users";
import { defineCommand, type CliContext } from "../command-definition";
import { UPLOADED_BY } from "../command-support";
import type { ManagementUserIdInput } from "./management-user-show";
import { managementUserIdFlag, managementUserIdValues } from "./management-user-show";

export async function managementUserDelete(ctx: CliContext, input: ManagementUserIdInput) {
  const db = ctx.database.db;
  // Read first only for the message; the deletion itself locks and checks the user again.
  const user = await readManagementUser(db, input.id);
  const removed = await removeManagementUser(db, input.id, UPLOADED_BY, new Date(ctx.clock()));
  const data = { deleted: { id: user.id, email: user.email, ...removed } };
  ctx.output.result(data, [
    `management user ${user.id}${user.email ? ` (${user.email})` : ""} deleted with ${removed.sessions} ` +
      `session(s), ${removed.permissions} permission(s) and ${removed.appRoles} app role(s); their tokens end now`,
  ]);
  return data;
}

export const managementUserDeleteCommand = defineCommand({
  name: "management-user:delete",
  summary: "delete a management user with their sessions, permissions and app roles (audited); their tokens end",
  flags: () => [managementUserIdFlag()],
  values: managementUserIdValues,
  uses: "database",
  run: managementUserDelete,
});
