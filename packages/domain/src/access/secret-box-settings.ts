import { z } from "zod";
import { parseSecretKey, SecretBox } from "./secret-box";

/** What is wrong with a key of sealed secrets (base64 of 32 bytes), if anything; never the key. */
function secretsKeyProblem(value: string): string | undefined {
  try {
    parseSecretKey(value);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

const secretsKey = z.string().superRefine((value, context) => {
  const problem = secretsKeyProblem(value);
  if (problem) context.addIssue({ code: "custom", message: problem });
});

/** Comma-separated keys of sealed secrets; a bad one is named by its place, never shown. */
const secretsKeyList = z
  .string()
  .default("")
  .transform((raw) =>
    raw
      .split(",")
      .map((key) => key.trim())
      .filter((key) => key !== ""),
  )
  .superRefine((keys, context) => {
    keys.forEach((key, index) => {
      const problem = secretsKeyProblem(key);
      if (problem) context.addIssue({ code: "custom", message: `key ${index + 1}: ${problem}` });
    });
  });

/**
 * The sealed-secrets settings, read alike by every process that seals or opens them: the API (the
 * provider's refresh tokens of management sessions, the console's sign-in state, a new API key
 * until its creator's first key list).
 */
export const managementSecretsSettings = {
  /**
   * Key of sealed secrets (AES-256-GCM): base64 of 32 bytes (`openssl rand -base64 32`).
   * Development default outside production.
   */
  MANAGEMENT_SECRETS_KEY: secretsKey.optional(),
  /** Earlier keys, comma-separated: values sealed under them still open after a rotation. */
  MANAGEMENT_SECRETS_PREVIOUS_KEYS: secretsKeyList,
};

/** The box of those settings, or undefined where no key is configured. */
export function secretBoxOfSettings(settings: {
  MANAGEMENT_SECRETS_KEY?: string | undefined;
  MANAGEMENT_SECRETS_PREVIOUS_KEYS: string[];
}): SecretBox | undefined {
  const key = settings.MANAGEMENT_SECRETS_KEY;
  return key === undefined ? undefined : SecretBox.fromBase64(key, settings.MANAGEMENT_SECRETS_PREVIOUS_KEYS);
}
