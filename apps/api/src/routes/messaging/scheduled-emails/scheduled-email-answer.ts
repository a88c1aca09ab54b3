import { z } from "@hono/zod-openapi";
import { scheduledEmailSchema } from "../schemas";

/** The answer of an operation on one schedule. */
export const scheduleAnswer = z.object({ schedule: scheduledEmailSchema });
