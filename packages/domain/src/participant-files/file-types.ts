/**
 * The content types a participant file can have, each with the signature its bytes start with and
 * the extension its stored name gets. The type of an upload is read from its bytes, never from
 * what the client declared: a file whose bytes match no allowed signature is refused whatever its
 * name or Content-Type says (case-backend sniffs the first 512 bytes the same way).
 */
const SIGNATURES = {
  "image/jpeg": { extension: ".jpg", matches: (b: Uint8Array) => startsWith(b, [0xff, 0xd8, 0xff]) },
  "image/png": {
    extension: ".png",
    matches: (b: Uint8Array) => startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  },
  "image/gif": {
    extension: ".gif",
    matches: (b: Uint8Array) => startsWithText(b, 0, "GIF87a") || startsWithText(b, 0, "GIF89a"),
  },
  "image/webp": {
    extension: ".webp",
    matches: (b: Uint8Array) => startsWithText(b, 0, "RIFF") && startsWithText(b, 8, "WEBPVP"),
  },
  "application/pdf": { extension: ".pdf", matches: (b: Uint8Array) => startsWithText(b, 0, "%PDF-") },
} as const;

export type ParticipantFileType = keyof typeof SIGNATURES;

/** Every type the detector knows, in the order it tries them. */
export const PARTICIPANT_FILE_TYPES = Object.keys(SIGNATURES) as ParticipantFileType[];

function startsWith(bytes: Uint8Array, signature: readonly number[]): boolean {
  return bytes.length >= signature.length && signature.every((byte, i) => bytes[i] === byte);
}

function startsWithText(bytes: Uint8Array, offset: number, text: string): boolean {
  if (bytes.length < offset + text.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[offset + i] !== text.charCodeAt(i)) return false;
  return true;
}

/** The type the bytes are, or null when they match no known signature. */
export function detectFileType(bytes: Uint8Array): ParticipantFileType | null {
  return PARTICIPANT_FILE_TYPES.find((type) => SIGNATURES[type].matches(bytes)) ?? null;
}

export function extensionOf(type: string): string {
  return type in SIGNATURES ? SIGNATURES[type as ParticipantFileType].extension : "";
}
