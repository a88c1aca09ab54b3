import { z } from "@hono/zod-openapi";
import { rateLimit, type RateLimiter } from "../../../rate-limit";
import { addressKeys } from "../../../client-address";

/** CASE clients name their instance; checked against INSTANCE_ID by checkInstanceId (absent or empty: accepted). */
export const instanceIdField = z
  .string()
  .max(200, "instanceId is longer than 200 characters")
  .optional()
  .openapi({ description: "this server's INSTANCE_ID; another instance's is refused", example: "tekenradar" });

/** A temporary participant's id from register: its only credential. */
export const temporaryParticipantIdField = (required: boolean) => {
  const field = z.string().max(200, "pid is longer than 200 characters");
  return (required ? field.min(1, "pid must not be empty") : field).openapi({
    description: "the temporary participant's id (participant.participantId of register)",
  });
};

/**
 * Unknown or unusable temporary participant ids count per address: the id is a bearer secret,
 * and a caller that keeps missing is guessing. Generous for a real client, which knows its id.
 */
export function temporaryIdGuessLimit(limiter: RateLimiter, name: string, failures: readonly number[]) {
  return rateLimit(limiter, {
    name,
    limit: 20,
    windowSeconds: 15 * 60,
    count: { failures },
    message: "too many requests with unknown temporary participants from this address; try again later",
    keys: (c) => addressKeys(c, "ip:"),
  });
}
