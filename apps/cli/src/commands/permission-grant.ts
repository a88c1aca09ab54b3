import { Option } from "commander";
import { z } from "zod";
import {
  CASE_STUDY_ACTIONS,
  RESOURCE_TYPES,
  STUDY_ACTIONS,
  SUBJECT_TYPES,
  USERS_ACTIONS,
  type PermissionLimiter,
  type ResourceType,
  type SubjectType,
} from "@studyflow/db";
import { forgetCached } from "@studyflow/domain/cache";
import { Conflict } from "@studyflow/domain/errors";
import {
  grantManagementUserPermission,
  grantServiceAccountPermission,
  insertSubjectPermission,
  isManagementUserId,
  type NewPermission,
} from "@studyflow/domain/management-users";
import { defineCommand, type CliContext } from "../command-definition";
import { UPLOADED_BY, requireStudy } from "../command-support";
import { oneOf, text } from "../flag-values";
import { permissionView } from "./permission-view";

/** Every action a grant may name, studyflow's study actions first (the domain checks which fits the resource type). */
const PERMISSION_ACTIONS = [
  ...new Set<string>([...STUDY_ACTIONS, ...CASE_STUDY_ACTIONS, ...USERS_ACTIONS, "*"]),
] as readonly string[];

export interface PermissionGrantInput {
  subject: string;
  subjectType: SubjectType;
  resourceType: ResourceType;
  /** A study key or "*" for resource type study; a messaging key; "*" for users. */
  resourceKey: string;
  action: string;
  limiter?: PermissionLimiter;
}

/** CASE's limiter as typed: a JSON array of objects of strings (or one such object). */
const limiterValue = text.transform((raw, ctx): PermissionLimiter => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    ctx.addIssue({ code: "custom", message: `must be JSON: ${(error as Error).message}` });
    return z.NEVER;
  }
  const list = Array.isArray(parsed) ? (parsed as unknown[]) : [parsed];
  const valid = list.every(
    (entry) =>
      typeof entry === "object" &&
      entry !== null &&
      !Array.isArray(entry) &&
      Object.values(entry).every((value) => typeof value === "string"),
  );
  if (!valid || list.length === 0) {
    ctx.addIssue({
      code: "custom",
      message: 'must be a JSON array of objects of strings, e.g. [{"surveyKey":"intake"}]',
    });
    return z.NEVER;
  }
  return list as PermissionLimiter;
});

/**
 * Grants as the user-management routes do, audited (`permission.grant` by the operator CLI): to a
 * service account or a signed-in management user through their grant functions (an unknown one is
 * refused); to any other management subject (a token subject minted by token:management) directly.
 * A grant already held is left as it is.
 */
async function grant(ctx: CliContext, input: PermissionGrantInput, permission: NewPermission) {
  const db = ctx.database.db;
  if (input.subjectType === "service-account") {
    return grantServiceAccountPermission(db, input.subject, permission, UPLOADED_BY, new Date(ctx.clock()));
  }
  if (isManagementUserId(input.subject)) {
    return grantManagementUserPermission(db, input.subject, permission, UPLOADED_BY, new Date(ctx.clock()));
  }
  const row = await db.transaction((tx) =>
    insertSubjectPermission(
      tx,
      { subjectType: "management-user", subjectId: input.subject },
      permission,
      UPLOADED_BY,
      new Date(ctx.clock()),
    ),
  );
  forgetCached(db, "grants", input.subject);
  return row;
}

export async function permissionGrant(ctx: CliContext, input: PermissionGrantInput) {
  // Permissions have no foreign key (so "*" can exist); checking here catches a mistyped key.
  if (input.resourceType === "study" && input.resourceKey !== "*") {
    await requireStudy(ctx.database.db, input.resourceKey);
  }
  const permission: NewPermission = {
    resourceType: input.resourceType,
    resourceKey: input.resourceKey,
    action: input.action,
    ...(input.limiter === undefined ? {} : { limiter: input.limiter }),
  };
  const what =
    `"${input.action}" on ${input.resourceType} "${input.resourceKey}"` +
    (input.limiter ? ` limited to ${JSON.stringify(input.limiter)}` : "");
  const to = `${input.subjectType} ${input.subject}`;
  try {
    const row = await grant(ctx, input, permission);
    const data = { granted: permissionView(row), alreadyHeld: false };
    ctx.output.result(data, [`granted ${what} to ${to} (permission ${row.id})`]);
    return data;
  } catch (error) {
    if (!(error instanceof Conflict)) throw error;
    // Granting again is harmless, as it always was from the command line.
    const data = {
      granted: {
        subjectType: input.subjectType,
        subjectId: input.subject,
        resourceType: input.resourceType,
        resourceKey: input.resourceKey,
        action: input.action,
        limiter: input.limiter ?? null,
      },
      alreadyHeld: true,
    };
    ctx.output.result(data, [`${to} already has ${what}; nothing changed`]);
    return data;
  }
}

export const permissionGrantCommand = defineCommand({
  name: "permission:grant",
  summary: "give a management user, token subject or service account a right (audited)",
  flags: () => [
    new Option(
      "--subject <S>",
      "who: a management user's id, a token subject (the `sub` of its management tokens) or a service account's id",
    ).makeOptionMandatory(),
    new Option("--subject-type <T>", `${SUBJECT_TYPES.join(" or ")} (default management-user)`),
    new Option("--study <KEY|*>", "study key, or * for every study (resource type study)"),
    new Option("--resource-type <T>", `what the right is on: ${RESOURCE_TYPES.join(", ")} (default study)`),
    new Option(
      "--resource-key <K>",
      "the resource: a study key or *; a messaging key (global-email-templates, …) or *; * for users",
    ),
    new Option(
      "--action <ACTION>",
      `the right granted: ${PERMISSION_ACTIONS.join(", ")} (* is every right of the resource type)`,
    ).makeOptionMandatory(),
    new Option("--limiter <JSON>", 'only for requests matching one of these maps, e.g. [{"surveyKey":"intake"}]'),
  ],
  values: z
    .object({
      subject: text,
      subjectType: oneOf(SUBJECT_TYPES).default("management-user"),
      study: text.optional(),
      resourceType: oneOf(RESOURCE_TYPES).default("study"),
      resourceKey: text.optional(),
      action: oneOf(PERMISSION_ACTIONS),
      limiter: limiterValue.optional(),
    })
    .transform((values, ctx): PermissionGrantInput => {
      const { subject, subjectType, study, resourceType, resourceKey, action, limiter } = values;
      if (study !== undefined && resourceKey !== undefined) {
        ctx.addIssue({ code: "custom", path: ["study"], message: "and --resource-key name the same thing: give one" });
        return z.NEVER;
      }
      if (study !== undefined && resourceType !== "study") {
        ctx.addIssue({ code: "custom", path: ["study"], message: `is for resource type study, not ${resourceType}` });
        return z.NEVER;
      }
      const key = study ?? resourceKey;
      if (key === undefined) {
        ctx.addIssue({ code: "custom", path: ["study"], message: "or --resource-key is required" });
        return z.NEVER;
      }
      if (resourceType === "study" && (key.length > 200 || (key !== "*" && !/^[^\s/?#]+$/.test(key)))) {
        ctx.addIssue({
          code: "custom",
          path: [study === undefined ? "resourceKey" : "study"],
          message: "must be at most 200 characters, without spaces, '/', '?' or '#'",
        });
        return z.NEVER;
      }
      return {
        subject,
        subjectType,
        resourceType,
        resourceKey: key,
        action,
        ...(limiter === undefined ? {} : { limiter }),
      };
    }),
  uses: "database",
  run: permissionGrant,
});
