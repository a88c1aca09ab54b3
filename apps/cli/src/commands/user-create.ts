import { Option } from "commander";
import { z } from "zod";
import { Invalid } from "@studyflow/domain/errors";
import { checkPasswordRule } from "@studyflow/domain/participant-accounts";
import { createUserWithProfiles } from "@studyflow/domain/study-setup";
import { defineCommand, type CliContext } from "../command-definition";
import { commaList, emailAddress, languageTag, text } from "../flag-values";
import { fieldLines } from "../output";

export interface UserCreateInput {
  email: string;
  password: string;
  /** Profile aliases; the first becomes the main profile. */
  profiles?: string[];
  language?: string;
}

export async function userCreate(ctx: CliContext, input: UserCreateInput) {
  // The same rule as password resets, so operator-made accounts are no weaker than others.
  const violation = checkPasswordRule(input.password);
  if (violation !== null) throw new Invalid(`--password: ${violation}`);
  const { user, profiles } = await createUserWithProfiles(ctx.database.db, {
    now: new Date(ctx.clock()),
    email: input.email,
    password: input.password,
    ...(input.profiles ? { profiles: input.profiles } : {}),
    ...(input.language ? { preferredLanguage: input.language } : {}),
  });
  const data = {
    user: {
      id: user.id,
      email: user.email,
      preferredLanguage: user.preferredLanguage,
      tokenVersion: user.tokenVersion,
    },
    profiles: profiles.map((profile) => ({ id: profile.id, alias: profile.alias, mainProfile: profile.mainProfile })),
  };
  ctx.output.result(data, [
    `user created`,
    ...fieldLines([
      ["id", user.id],
      ["email", user.email],
      ["language", user.preferredLanguage],
    ]),
    "profiles:",
    ...data.profiles.map((profile) => `  ${profile.id}  ${profile.alias}${profile.mainProfile ? " (main)" : ""}`),
  ]);
  return data;
}

export const userCreateCommand = defineCommand({
  name: "user:create",
  summary: "create a participant account with profiles",
  flags: () => [
    new Option("--email <E>", "login e-mail").makeOptionMandatory(),
    new Option("--password <P>", "password (same rule as password resets)").makeOptionMandatory(),
    new Option(
      "--profiles <A1,A2,…>",
      "profile aliases; the first is the main profile (default: the address blurred as case-backend names it, p****@example.org)",
    ),
    new Option("--language <LANG>", "preferred language (default en)"),
  ],
  values: z
    .object({
      email: emailAddress,
      password: text,
      profiles: commaList.optional(),
      language: languageTag.optional(),
    })
    .transform(({ email, password, profiles, language }): UserCreateInput => ({
      email,
      password,
      ...(profiles ? { profiles } : {}),
      ...(language === undefined ? {} : { language }),
    })),
  uses: "database",
  run: userCreate,
});
