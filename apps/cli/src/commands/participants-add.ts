import { Option } from "commander";
import { z } from "zod";
import { addSyntheticParticipants } from "@studyflow/domain/study-setup";
import { defineCommand, type CliContext } from "../command-definition";
import { Conflict } from "@studyflow/domain/errors";
import { requireStudy } from "../command-support";
import { commaList, studyKey, text, wholeNumber } from "../flag-values";
import { fieldLines } from "../output";

/**
 * Upper bound of `--count`: large enough for load tests of a big cohort, small enough that a
 * stray extra zero does not fill the disk. It also keeps generated ids (prefix + 9 digits) in
 * index order.
 */
const MAX_SYNTHETIC_PARTICIPANTS = 10_000_000;

export interface ParticipantsAddInput {
  studyKey: string;
  count: number;
  /** Assigned round-robin; default all active. */
  statuses?: string[];
  /** Prefix of the generated participant ids; default "p". */
  prefix?: string;
  /** Unix seconds written as enteredAt/modifiedAt; default now. */
  enteredAt?: number;
}

export async function participantsAdd(ctx: CliContext, input: ParticipantsAddInput) {
  await requireStudy(ctx.database.db, input.studyKey);
  const prefix = input.prefix ?? "p";
  const statuses = input.statuses && input.statuses.length > 0 ? input.statuses : ["active"];
  const enteredAt = input.enteredAt ?? Math.floor(ctx.clock() / 1000);
  // One transaction, so a clash with existing ids halfway through leaves no partial cohort.
  const added = await ctx.database.db
    .transaction((tx) =>
      addSyntheticParticipants(tx, {
        studyKey: input.studyKey,
        count: input.count,
        statuses,
        enteredAt,
        idPrefix: prefix,
      }),
    )
    .catch((error: unknown) => {
      // the operator's way out, in the operator's words
      if (error instanceof Conflict) throw new Conflict(`${error.message}; choose another --prefix`);
      throw error;
    });
  // Mirrors the id scheme of addSyntheticParticipants: prefix + index padded to 9 digits.
  const idAt = (index: number) => `${prefix}${String(index).padStart(9, "0")}`;
  const data = {
    studyKey: input.studyKey,
    added,
    statuses,
    enteredAt,
    firstParticipantId: idAt(0),
    lastParticipantId: idAt(added - 1),
  };
  ctx.output.result(data, [
    `${added} participants added to study "${input.studyKey}"`,
    ...fieldLines([
      ["statuses", statuses.join(", ")],
      ["ids", `${data.firstParticipantId} … ${data.lastParticipantId}`],
    ]),
  ]);
  return data;
}

export const participantsAddCommand = defineCommand({
  name: "participants:add",
  summary: "insert synthetic participants (for demos and load tests)",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option("--count <N>", `how many, 1 to ${MAX_SYNTHETIC_PARTICIPANTS}`).makeOptionMandatory(),
    new Option("--statuses <S1,S2,…>", "study statuses assigned round-robin (default active)"),
    new Option("--prefix <P>", "participant id prefix; ids are P + 9 digits (default p)"),
  ],
  values: z
    .object({
      study: studyKey,
      count: wholeNumber(1, MAX_SYNTHETIC_PARTICIPANTS),
      statuses: commaList.optional(),
      prefix: text.optional(),
    })
    .transform(({ study, count, statuses, prefix }): ParticipantsAddInput => ({
      studyKey: study,
      count,
      ...(statuses ? { statuses } : {}),
      ...(prefix === undefined ? {} : { prefix }),
    })),
  uses: "database",
  run: participantsAdd,
});
