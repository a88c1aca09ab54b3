import { z } from "@hono/zod-openapi";

/** Bounds of a report written by hand: the sizes reports reach through rules, with room to spare. */
const MAX_ENTRIES = 1_000;
const MAX_TEXT = 4_096;

/** case-backend's ReportData. */
export const reportDataSchema = z
  .array(
    z.object({
      key: z.string({ error: "data key must be a string" }).max(200, "data key is longer than 200 characters"),
      value: z
        .string({ error: "data value must be a string" })
        .max(MAX_TEXT, `data value is longer than ${MAX_TEXT} characters`),
      dtype: z.string().max(50, "dtype is longer than 50 characters").optional(),
    }),
  )
  .max(MAX_ENTRIES, `data: at most ${MAX_ENTRIES} entries`);

export type ReportDataEntries = z.infer<typeof reportDataSchema>;

/** The entries as stored: dtype only when there is one, as case-backend omits it. */
export const storedReportData = (data: ReportDataEntries | null | undefined) =>
  (data ?? []).map((entry) => ({ key: entry.key, value: entry.value, ...(entry.dtype ? { dtype: entry.dtype } : {}) }));
