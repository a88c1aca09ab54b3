import { z } from "@hono/zod-openapi";
import { Invalid } from "@studyflow/domain/errors";
import { keyString } from "../../schemas";

/**
 * The `{exportID}` of the daily and confidential export downloads: the file's name in base64, as
 * case-admin builds it (`btoa(filename)`, standard alphabet) and case-backend decodes it (URL-safe
 * alphabet); both alphabets are accepted, padded or not.
 */
export function decodeExportId(exportId: string): string {
  const normalised = exportId.replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, "");
  if (!/^[A-Za-z0-9+/]+$/.test(normalised) || normalised.length % 4 === 1) {
    throw new Invalid("exportID: not a base64-encoded file name");
  }
  const name = Buffer.from(normalised, "base64").toString("utf8");
  if (name === "" || name.includes("\uFFFD") || /[/\\]/.test(name) || name.includes("\u0000")) {
    throw new Invalid("exportID: not a base64-encoded file name");
  }
  return name;
}

export const exportIdParams = z.object({
  studyKey: keyString("studyKey").openapi({ param: { name: "studyKey", in: "path" } }),
  exportID: z
    .string()
    .min(1, "exportID must not be empty")
    .max(1000, "exportID is longer than 1000 characters")
    .openapi({
      param: { name: "exportID", in: "path" },
      description: "the file name from the list, base64-encoded",
      example: "MjAyNi0xMS0yNSMjcmVzcG9uc2VzIyN3ZWVrbHkjI3dpZGUuY3N2",
    }),
});
