import { Readable } from "node:stream";
import addressparser from "nodemailer/lib/addressparser/index.js";
import MailComposer from "nodemailer/lib/mail-composer/index.js";
import { parseConnectionUrl } from "nodemailer/lib/shared/index.js";
import SMTPConnection from "nodemailer/lib/smtp-connection/index.js";

/**
 * Limit on each SMTP wait (connect, greeting, every reply). A healthy server answers in well under
 * a second; nodemailer's defaults (2 min to connect, 10 min per reply) would let one hung server
 * hold a whole batch, and the worker's shutdown, for many minutes.
 */
export const SMTP_TIMEOUT_MS = 10_000;

export interface OutgoingMail {
  /** The outbox row's id; it also becomes the Message-ID, so receivers can spot a duplicate. */
  id: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  /**
   * The template's own From, Sender and Reply-To (an empty Reply-To: none), instead of the
   * deployment's; each must name one mailbox, else the deployment's is used (a Reply-To entry that
   * names none is left out). The envelope sender, where bounces go, stays the deployment's.
   */
  headers?: { from?: string; sender?: string; replyTo?: string[] };
}

export interface Mailer {
  /** @throws SmtpDeliveryError when the server did not confirm the message. */
  send: (mail: OutgoingMail) => Promise<void>;
}

/**
 * The SMTP server did not confirm a message. `mayHaveBeenDelivered` is true when all of the
 * message had been written and the connection then failed without an answer: the server may
 * have accepted it, so sending it again could deliver it twice.
 */
export class SmtpDeliveryError extends Error {
  constructor(
    message: string,
    readonly mayHaveBeenDelivered: boolean,
    options?: { cause: unknown },
  ) {
    super(message, options);
    this.name = "SmtpDeliveryError";
  }
}

/** Failures of the connection itself, as opposed to an answer from the server. */
const CONNECTION_FAILURES = new Set(["ECONNECTION", "ETIMEDOUT", "ESOCKET"]);

function smtpFailure(error: unknown, bodyWritten: boolean): SmtpDeliveryError {
  const details = (typeof error === "object" && error !== null ? error : {}) as {
    code?: unknown;
    responseCode?: unknown;
    message?: unknown;
  };
  const message = typeof details.message === "string" ? details.message : String(error);
  // A 4xx/5xx reply is the server saying no: whatever the stage, it did not take the message.
  const refused = typeof details.responseCode === "number" && details.responseCode >= 400;
  const connectionFailed = typeof details.code !== "string" || CONNECTION_FAILURES.has(details.code);
  return new SmtpDeliveryError(message, bodyWritten && connectionFailed && !refused, { cause: error });
}

/**
 * One mailbox (`Name <address@domain>` or a bare address) as a template's header names it; undefined
 * for anything else (a group, several addresses, no address), which then gives way to the
 * deployment's own header rather than reaching the mail as the parser happened to read it.
 */
function singleMailbox(value: string): { name: string; address: string } | undefined {
  const parsed = addressparser(value);
  const [only] = parsed;
  if (parsed.length !== 1 || !only || !("address" in only) || !/^[^\s@]+@[^\s@]+$/.test(only.address)) {
    return undefined;
  }
  return { name: only.name, address: only.address };
}

function senderDomain(from: string): string {
  return /@([^\s<>@]+)>?\s*$/.exec(from)?.[1] ?? "studyflow.local";
}

/**
 * Sends each message over its own SMTP connection (no pool, so no connection goes stale between
 * polls). nodemailer's SMTPConnection is driven directly rather than through its transport: the
 * message body is only read once the server has accepted DATA, so whether a failure came before
 * or after the whole message was on the wire is known, and only the latter is ambiguous.
 */
export function createSmtpMailer(options: { smtpUrl: string; from: string; timeoutMs?: number }): Mailer {
  const timeout = options.timeoutMs ?? SMTP_TIMEOUT_MS;
  // The URL's own query options (e.g. tls.rejectUnauthorized) win over these defaults.
  const { auth, ...connectionOptions } = {
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
    dnsTimeout: timeout,
    ...parseConnectionUrl(options.smtpUrl),
  };
  const credentials =
    auth && "user" in auth && "pass" in auth && typeof auth.pass === "string"
      ? { user: auth.user, pass: auth.pass }
      : undefined;
  const domain = senderDomain(options.from);

  return {
    send: async (mail) => {
      const headers = mail.headers ?? {};
      const from = headers.from === undefined ? undefined : singleMailbox(headers.from);
      const sender = headers.sender === undefined ? undefined : singleMailbox(headers.sender);
      const replyTo = (headers.replyTo ?? []).flatMap((address) => singleMailbox(address) ?? []);
      const composed = new MailComposer({
        from: from ?? options.from,
        ...(sender ? { sender } : {}),
        ...(replyTo.length > 0 ? { replyTo } : {}),
        envelope: { from: options.from, to: mail.to },
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        messageId: `<${mail.id}@${domain}>`,
      }).compile();
      const envelope = composed.getEnvelope();
      const raw = await composed.build();

      await new Promise<void>((resolve, reject) => {
        const connection = new SMTPConnection(connectionOptions);
        let bodyWritten = false;
        let settled = false;
        const settle = (error?: unknown) => {
          if (settled) return;
          settled = true;
          if (error === undefined) {
            connection.quit();
            resolve();
          } else {
            connection.close();
            reject(smtpFailure(error, bodyWritten));
          }
        };
        connection.once("error", (error) => settle(error));
        connection.once("end", () => settle(Object.assign(new Error("connection closed"), { code: "ECONNECTION" })));

        const transmit = () => {
          const body = Readable.from([raw], { objectMode: false });
          body.once("end", () => {
            bodyWritten = true;
          });
          connection.send(envelope, body, (error) => settle(error ?? undefined));
        };
        connection.connect(() => {
          if (settled) return;
          if (!credentials) return transmit();
          connection.login({ credentials }, (error) => (error ? settle(error) : transmit()));
        });
      });
    },
  };
}
