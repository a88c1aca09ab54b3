import { Option } from "commander";
import { z } from "zod";
import {
  findParticipantAccountByEmail,
  lockParticipantAccount,
  signOutParticipantAccount,
  unlockParticipantAccount,
  type ParticipantAccountSummary,
} from "@studyflow/domain/participant-accounts";
import { presentParticipantAccount } from "@studyflow/presenters/participant-account";
import { defineCommand, type CliCommand, type CliContext } from "../command-definition";
import { UPLOADED_BY } from "../command-support";
import { emailAddress, text } from "../flag-values";
import { fieldLines } from "../output";

/**
 * Operators' commands for participant accounts: find by e-mail, lock, unlock, sign out everywhere
 * (user:delete is its own file). The same domain functions as /v1/participant-users; each change
 * is audited under the CLI's operator name.
 */

function showAccount(ctx: CliContext, headline: string, account: ParticipantAccountSummary) {
  const data = presentParticipantAccount(account);
  ctx.output.result({ account: data }, [
    headline,
    ...fieldLines([
      ["id", data.id],
      ["email", data.email],
      ["created", data.createdAt],
      ["confirmed", data.confirmedAt ?? "no"],
      ["locked", data.lockedAt ?? "no"],
      ["last login", data.lastLoginAt ?? "never"],
      ["profiles", data.profileCount],
      [
        "deletion",
        data.deletion
          ? `${data.deletion.status} (${data.deletion.participantsDone} participants out)${data.deletion.error ? `: ${data.deletion.error}` : ""}`
          : null,
      ],
    ]),
  ]);
  return { account: data };
}

const userFlag = () => new Option("--user <ID>", "the account's id (user:find prints it)").makeOptionMandatory();
const action = (ctx: CliContext, userId: string) => ({ userId, operator: UPLOADED_BY, now: new Date(ctx.clock()) });

export const userFindCommand = defineCommand({
  name: "user:find",
  summary: "find a participant account by e-mail: its id, state and deletion (never a hash)",
  flags: () => [new Option("--email <E>", "the account's e-mail").makeOptionMandatory()],
  values: z.object({ email: emailAddress }),
  uses: "database",
  run: async (ctx, input) =>
    showAccount(ctx, "participant account", await findParticipantAccountByEmail(ctx.database.db, input.email)),
});

export const userLockCommand = defineCommand({
  name: "user:lock",
  summary: "lock a participant account: no sign-in until unlocked, every session ends now",
  flags: () => [userFlag()],
  values: z.object({ user: text }),
  uses: "database",
  run: async (ctx, input) =>
    showAccount(ctx, "account locked", await lockParticipantAccount(ctx.database.db, action(ctx, input.user))),
});

export const userUnlockCommand = defineCommand({
  name: "user:unlock",
  summary: "unlock a participant account",
  flags: () => [userFlag()],
  values: z.object({ user: text }),
  uses: "database",
  run: async (ctx, input) =>
    showAccount(ctx, "account unlocked", await unlockParticipantAccount(ctx.database.db, action(ctx, input.user))),
});

export const userSignOutCommand = defineCommand({
  name: "user:sign-out",
  summary: "sign a participant account out everywhere (every session and access token)",
  flags: () => [userFlag()],
  values: z.object({ user: text }),
  uses: "database",
  run: async (ctx, input) => {
    const sessionsEnded = await signOutParticipantAccount(ctx.database.db, action(ctx, input.user));
    const data = { userId: input.user, sessionsEnded };
    ctx.output.result(data, [`signed out everywhere (${sessionsEnded} open sessions ended)`]);
    return data;
  },
});

export const USER_ACCOUNT_COMMANDS: readonly CliCommand[] = [
  userFindCommand,
  userLockCommand,
  userUnlockCommand,
  userSignOutCommand,
];
