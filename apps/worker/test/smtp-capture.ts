// A real SMTP server on a free port of 127.0.0.1 that keeps every message it takes, whole (raw)
// and as read (decoded by mail-parsing.ts), for the outbox's tests to deliver to.
import type { AddressInfo } from "node:net";
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from "smtp-server";
import { afterEach, beforeEach } from "vitest";
import { createSmtpMailer, type Mailer } from "../src/outbox/smtp-mailer";
import { parseMail, type ReceivedMail } from "./mail-parsing";

/** The sender the tests' mailers write as. */
export const MAIL_FROM = "studyflow <no-reply@studyflow.test>";

export interface CapturedMail extends ReceivedMail {
  /** The message as it came over the wire, headers included. */
  raw: string;
  /** The envelope sender (MAIL FROM), where bounces go. */
  envelopeFrom: string;
}

/** Refuses a recipient (an error with `responseCode`) or lets it through. */
export type RcptHook = (address: string, attempt: number) => Error | undefined;
/** Refuses a message, leaves it unanswered ("hang") or lets it through. */
export type DataHook = (attempt: number) => Error | "hang" | undefined | Promise<Error | "hang" | undefined>;

export interface SmtpCaptureOptions {
  onRcpt?: RcptHook;
  onData?: DataHook;
  /** A port to listen on (to come back on an address a test closed); a free one by default. */
  port?: number;
}

export interface SmtpCapture {
  url: string;
  received: CapturedMail[];
  /** Connections the server saw, to prove that nothing was attempted. */
  connections: () => number;
  /** A mailer to this server, as `MAIL_FROM`. */
  mailer: Mailer;
  mailsTo: (address: string) => CapturedMail[];
  close: () => Promise<void>;
}

/** An SMTP reply the server answers with. */
export function smtpError(responseCode: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode });
}

export async function startSmtpCapture(options: SmtpCaptureOptions = {}): Promise<SmtpCapture> {
  const received: CapturedMail[] = [];
  let connections = 0;
  let rcptAttempts = 0;
  let dataAttempts = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    disableReverseLookup: true,
    closeTimeout: 1_000,
    onConnect: (_session, callback) => {
      connections += 1;
      callback();
    },
    onRcptTo: (address, _session, callback) => {
      rcptAttempts += 1;
      callback(options.onRcpt?.(address.address, rcptAttempts) ?? null);
    },
    onData: (stream: SMTPServerDataStream, session: SMTPServerSession, callback) => {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        dataAttempts += 1;
        void Promise.resolve(options.onData?.(dataAttempts)).then((verdict) => {
          if (verdict === "hang") return;
          if (verdict) return callback(verdict);
          const raw = Buffer.concat(chunks).toString("utf8");
          const envelopeTo = session.envelope.rcptTo.map((rcpt) => rcpt.address);
          const envelopeFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
          received.push({ ...parseMail(raw, envelopeTo), raw, envelopeFrom });
          callback();
        });
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const { port } = server.server.address() as AddressInfo;
  const url = `smtp://127.0.0.1:${port}`;
  return {
    url,
    received,
    connections: () => connections,
    mailer: createSmtpMailer({ smtpUrl: url, from: MAIL_FROM }),
    mailsTo: (address) => received.filter((mail) => mail.envelopeTo.includes(address)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The address of an SMTP server that is gone: connections to it are refused. */
export async function closedSmtpUrl(): Promise<string> {
  const gone = await startSmtpCapture();
  await gone.close();
  return gone.url;
}

/**
 * A fresh capture for each test of the calling `describe` block, closed after it: call the
 * returned function inside a test for the current one.
 */
export function smtpCapturePerTest(): () => SmtpCapture {
  let current: SmtpCapture | undefined;
  beforeEach(async () => {
    current = await startSmtpCapture();
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return () => {
    if (!current) throw new Error("no SMTP capture outside a test");
    return current;
  };
}
