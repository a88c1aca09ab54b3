import { Option } from "commander";
import { z } from "zod";
import {
  listManagementUserAppRoles,
  listManagementUserPermissions,
  readManagementUser,
} from "@studyflow/domain/management-users";
import { defineCommand, type CliContext } from "../command-definition";
import { rowId } from "../flag-values";
import { fieldLines, tableLines } from "../output";
import { permissionView } from "./permission-view";

export interface ManagementUserIdInput {
  id: string;
}

export async function managementUserShow(ctx: CliContext, input: ManagementUserIdInput) {
  const db = ctx.database.db;
  const user = await readManagementUser(db, input.id);
  const [permissions, appRoles] = await Promise.all([
    listManagementUserPermissions(db, user.id),
    listManagementUserAppRoles(db, user.id),
  ]);
  const data = {
    managementUser: {
      id: user.id,
      email: user.email,
      username: user.username,
      provider: user.provider,
      sub: user.sub,
      imageUrl: user.imageUrl,
      isAdmin: user.isAdmin,
      createdAt: user.createdAt,
      lastLoginAt: user.lastLoginAt,
    },
    permissions: permissions.map(permissionView),
    appRoles: appRoles.map((role) => ({
      id: role.id,
      appName: role.appName,
      role: role.role,
      createdAt: role.createdAt,
    })),
  };
  ctx.output.result(data, [
    ...fieldLines([
      ["id", user.id],
      ["email", user.email || undefined],
      ["name", user.username || undefined],
      ["provider", user.provider || undefined],
      ["sub", user.sub],
      ["admin", user.isAdmin ? "yes" : "no"],
      ["created", user.createdAt.toISOString()],
      ["last sign-in", user.lastLoginAt?.toISOString()],
    ]),
    "",
    `${permissions.length} permission${permissions.length === 1 ? "" : "s"}`,
    ...(permissions.length === 0
      ? []
      : tableLines([
          ["id", "resource", "key", "action", "limiter"],
          ...data.permissions.map((permission) => [
            permission.id,
            permission.resourceType,
            permission.resourceKey,
            permission.action,
            permission.limiter ? JSON.stringify(permission.limiter) : "-",
          ]),
        ])),
    `${appRoles.length} app role${appRoles.length === 1 ? "" : "s"}`,
    ...(appRoles.length === 0
      ? []
      : tableLines([["app", "role"], ...appRoles.map((role) => [role.appName, role.role])])),
  ]);
  return data;
}

export const managementUserIdFlag = () =>
  new Option("--id <ID>", "the management user's id (from management-user:list)").makeOptionMandatory();
export const managementUserIdValues = z.object({ id: rowId("a management user", "management-user:list") });

export const managementUserShowCommand = defineCommand({
  name: "management-user:show",
  summary: "show a management user with their permissions and app roles",
  flags: () => [managementUserIdFlag()],
  values: managementUserIdValues,
  uses: "database",
  run: managementUserShow,
});
