import { z } from "zod";
import { listManagementUsers } from "@studyflow/domain/management-users";
import { defineCommand, type CliContext } from "../command-definition";
import { tableLines } from "../output";

const COLUMNS = ["id", "email", "name", "provider", "admin", "created", "last sign-in"] as const;

const shown = (date: Date | null) => date?.toISOString() ?? "-";

export async function managementUserList(ctx: CliContext) {
  const users = await listManagementUsers(ctx.database.db);
  const managementUsers = users.map((user) => ({
    id: user.id,
    email: user.email,
    username: user.username,
    provider: user.provider,
    sub: user.sub,
    isAdmin: user.isAdmin,
    createdAt: user.createdAt,
    lastLoginAt: user.lastLoginAt,
  }));
  const data = { managementUsers };
  ctx.output.result(data, [
    `${users.length} management user${users.length === 1 ? "" : "s"} (created by signing in; oldest first)`,
    ...(users.length === 0
      ? []
      : tableLines([
          COLUMNS,
          ...users.map((user) => [
            user.id,
            user.email || "-",
            user.username || "-",
            user.provider || "-",
            user.isAdmin ? "yes" : "no",
            shown(user.createdAt),
            shown(user.lastLoginAt),
          ]),
        ])),
  ]);
  return data;
}

export const managementUserListCommand = defineCommand({
  name: "management-user:list",
  summary: "list the management users (people signed in through case-admin or the console)",
  flags: () => [],
  values: z.object({}),
  uses: "database",
  run: (ctx) => managementUserList(ctx),
});
