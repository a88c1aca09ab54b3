import { z } from "@hono/zod-openapi";
import type { Executor } from "@studyflow/db";
import { assertProfileOfUser } from "@studyflow/domain/access";
import type { Context } from "hono";
import { participantOf, type AppEnv } from "../../../app-env";
import { profileIdField } from "../../schemas";

/** The body of an event that names nothing but the profile: entering and leaving a study. */
export const profileEventBody = z.object({ profileID: profileIdField });

/** The signed-in user and the profile of theirs an event names (403 when it is someone else's). */
export async function eventProfile(db: Executor, c: Context<AppEnv>, profileId: string) {
  const { userId } = participantOf(c);
  return { userId, profile: await assertProfileOfUser(db, userId, profileId) };
}
