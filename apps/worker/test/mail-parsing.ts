// Reading the mails nodemailer writes, as a test's SMTP server receives them: headers (RFC 2047
// encoded words), multipart/alternative, quoted-printable or base64 bodies.

export interface ReceivedMail {
  envelopeTo: string[];
  messageId: string;
  subject: string;
  text: string;
  html: string;
}

export function decodeQuotedPrintable(body: string): string {
  const bytes: number[] = [];
  const joined = body.replace(/=\r?\n/g, "");
  for (let i = 0; i < joined.length; i++) {
    const hex = joined.slice(i + 1, i + 3);
    if (joined[i] === "=" && /^[0-9A-F]{2}$/i.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(joined[i]!, "utf8"));
    }
  }
  return Buffer.from(bytes).toString("utf8");
}

function decodeBody(body: string, encoding: string | undefined): string {
  if (encoding === "quoted-printable") return decodeQuotedPrintable(body);
  if (encoding === "base64") return Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8");
  return body;
}

/** RFC 2047 encoded words, as nodemailer writes non-ASCII subjects. */
function decodeHeader(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, "?==?")
    .replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_, _charset: string, kind: string, text: string) =>
      kind.toUpperCase() === "B"
        ? Buffer.from(text, "base64").toString("utf8")
        : decodeQuotedPrintable(text.replace(/_/g, " ")),
    );
}

interface MimePart {
  headers: Map<string, string>;
  body: string;
}

function parsePart(raw: string): MimePart {
  const split = raw.indexOf("\r\n\r\n");
  const head = split < 0 ? raw : raw.slice(0, split);
  const body = split < 0 ? "" : raw.slice(split + 4);
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r\n[ \t]+/g, " ").split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { headers, body };
}

export function parseMail(raw: string, envelopeTo: string[]): ReceivedMail {
  const root = parsePart(raw);
  const leaves: MimePart[] = [];
  const collect = (part: MimePart) => {
    const boundary = /boundary="?([^";]+)"?/.exec(part.headers.get("content-type") ?? "")?.[1];
    if (!boundary) return leaves.push(part);
    const sections = part.body.split(`--${boundary}`).slice(1, -1);
    for (const section of sections) collect(parsePart(section.replace(/^\r\n/, "").replace(/\r\n$/, "")));
  };
  collect(root);
  const bodyOf = (type: string) => {
    const leaf = leaves.find((part) => (part.headers.get("content-type") ?? "").startsWith(type));
    return leaf ? decodeBody(leaf.body, leaf.headers.get("content-transfer-encoding")?.toLowerCase()) : "";
  };
  return {
    envelopeTo,
    messageId: root.headers.get("message-id") ?? "",
    subject: decodeHeader(root.headers.get("subject") ?? ""),
    text: bodyOf("text/plain"),
    html: bodyOf("text/html"),
  };
}
