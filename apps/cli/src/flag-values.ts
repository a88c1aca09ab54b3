import { z } from "zod";

/**
 * Zod schemas of flag values. Commander hands every value over as a string (or `true` for a
 * switch); these check and convert it. Messages leave out the flag: the program puts the flag's
 * name in front ("--count must be …"), so the same schema serves several flags.
 */

/** Any value: a blank one is refused rather than taken as "not given". */
export const text = z
  .string()
  .refine((value) => value.trim() !== "", { message: "needs a non-empty value", abort: true });

/** A switch (`--admin`): commander gives `true` when present, nothing otherwise. */
export const switchFlag = z.boolean().default(false);

const STUDY_KEY_RULE = "must be at most 200 characters, without spaces, '/', '?' or '#'";
const isStudyKey = (value: string) => value.length <= 200 && /^[^\s/?#]+$/.test(value);

/** Study keys end up in URL paths of the API, so they follow the API's rule for keys. */
export const studyKey = text.refine(isStudyKey, STUDY_KEY_RULE);

export const wholeNumber = (min: number, max: number) =>
  text.transform((raw, ctx) => {
    const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      ctx.addIssue({ code: "custom", message: `must be a whole number from ${min} to ${max}, got "${raw}"` });
      return z.NEVER;
    }
    return value;
  });

export const oneOf = <const T extends string>(allowed: readonly T[]) =>
  text.transform((raw, ctx) => {
    const match = allowed.find((candidate) => candidate === raw);
    if (match === undefined) {
      ctx.addIssue({ code: "custom", message: `must be one of ${allowed.join(", ")}; got "${raw}"` });
      return z.NEVER;
    }
    return match;
  });

/** `a,b,c`; an empty item is more likely a typo than an intended blank. */
export const commaList = text.transform((raw, ctx) => {
  const items = raw.split(",").map((item) => item.trim());
  if (items.some((item) => item === "")) {
    ctx.addIssue({ code: "custom", message: "is a comma-separated list without empty items" });
    return z.NEVER;
  }
  return items;
});

export const emailAddress = text.refine(
  (value) => z.email().safeParse(value.trim()).success,
  "must be an e-mail address",
);

export const languageTag = text.regex(
  /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/,
  "must be a language tag such as en or de-CH",
);

/** User ids are UUIDs; stored in lower case, so any case is accepted. */
export const userId = text.transform((raw, ctx) => {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(raw)) {
    ctx.addIssue({ code: "custom", message: `must be a user id (UUID), got "${raw}"` });
    return z.NEVER;
  }
  return raw.toLowerCase();
});

/** An http(s) base URL, without a trailing slash so paths can be appended. */
export const baseUrl = text.transform((raw, ctx) => {
  if (!/^https?:\/\//.test(raw) || !URL.canParse(raw)) {
    ctx.addIssue({ code: "custom", message: `must be an http:// or https:// URL, got "${raw}"` });
    return z.NEVER;
  }
  return raw.replace(/\/$/, "");
});

/** A JSON object typed on the command line (`--filter '{"key": "weekly"}'`), parsed. */
export const jsonObject = text.transform((raw, ctx) => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    ctx.addIssue({ code: "custom", message: `must be a JSON object: ${(error as Error).message}` });
    return z.NEVER;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    ctx.addIssue({ code: "custom", message: `must be a JSON object, got ${Array.isArray(parsed) ? "an array" : raw}` });
    return z.NEVER;
  }
  return parsed as Record<string, unknown>;
});

/** The id of a row the CLI lists (a UUID, as its list command shows it); stored in lower case. */
export const rowId = (what: string, listedBy: string) =>
  text.transform((raw, ctx) => {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(raw)) {
      ctx.addIssue({ code: "custom", message: `must be ${what} id (UUID, see ${listedBy}), got "${raw}"` });
      return z.NEVER;
    }
    return raw.toLowerCase();
  });
