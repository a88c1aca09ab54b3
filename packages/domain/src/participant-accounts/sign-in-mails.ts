import { escapeHtml, htmlDocument, type MailLanguage, type RenderedMail } from "../mail/mail-document";
import { UndeliverableMessage } from "../mail/undeliverable-message";

/** The sign-in mails: verify-email, signup-attempt, otp-code, email-changed. */
export const SIGN_IN_MAIL_TEMPLATES = ["verify-email", "signup-attempt", "otp-code", "email-changed"] as const;

const paragraph = (text: string) => `<p>${escapeHtml(text)}</p>`;
const linkParagraph = (url: string) => `<p><a href="${escapeHtml(url)}">${escapeHtml(url)}</a></p>`;

function httpUrl(payload: Record<string, unknown>, key: string, template: string): string {
  const value = payload[key];
  if (typeof value !== "string" || !URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
    throw new UndeliverableMessage(`${template} message has no valid ${key} in its payload`);
  }
  return value;
}

function mail(language: MailLanguage, subject: string, lines: string[], link?: string): RenderedMail {
  const blocks = lines.map(paragraph);
  if (link) blocks.splice(1, 0, linkParagraph(link));
  const text = link ? [lines[0], link, ...lines.slice(1)] : lines;
  return { subject, text: `${text.join("\n\n")}\n`, html: htmlDocument(language, blocks) };
}

/** Renders a sign-in mail, or returns null for a template that is not one. */
export function renderSignInMail(
  template: string,
  language: MailLanguage,
  payload: Record<string, unknown>,
): RenderedMail | null {
  const de = language === "de";
  switch (template) {
    case "verify-email": {
      const link = httpUrl(payload, "verifyUrl", template);
      return de
        ? mail(
            language,
            "E-Mail-Adresse bestätigen",
            [
              "Bitte bestätigen Sie die Adresse Ihres neuen Kontos mit diesem Link:",
              "Wenn Sie kein Konto angelegt haben, ignorieren Sie diese E-Mail.",
            ],
            link,
          )
        : mail(
            language,
            "Confirm your e-mail address",
            [
              "Please confirm the address of your new account with this link:",
              "If you did not sign up, ignore this e-mail.",
            ],
            link,
          );
    }
    case "signup-attempt": {
      const link = httpUrl(payload, "resetUrl", template);
      return de
        ? mail(
            language,
            "Anmeldeversuch mit Ihrer Adresse",
            [
              "Jemand hat versucht, mit Ihrer Adresse ein neues Konto anzulegen. Sie haben bereits eines; es wurde nichts geändert. Falls Sie Ihr Passwort vergessen haben, können Sie es hier zurücksetzen:",
              "Wenn Sie das nicht waren, ist nichts weiter zu tun.",
            ],
            link,
          )
        : mail(
            language,
            "Someone tried to sign up with your address",
            [
              "Someone tried to create a new account with your address. You already have one; nothing was changed. If you forgot your password, you can reset it here:",
              "If this was not you, there is nothing to do.",
            ],
            link,
          );
    }
    case "otp-code": {
      const code = payload.code;
      if (typeof code !== "string" || !/^\d{6}$/.test(code)) {
        throw new UndeliverableMessage("otp-code message has no 6-digit code in its payload");
      }
      return de
        ? mail(language, "Ihr Bestätigungscode", [
            `Ihr Bestätigungscode lautet ${code}. Er ist 10 Minuten gültig.`,
            "Geben Sie ihn niemandem weiter. Wenn Sie ihn nicht angefordert haben, ändern Sie Ihr Passwort.",
          ])
        : mail(language, "Your verification code", [
            `Your verification code is ${code}. It is valid for 10 minutes.`,
            "Do not share it with anyone. If you did not ask for it, change your password.",
          ]);
    }
    case "email-changed": {
      const raw = payload.newEmail;
      if (typeof raw !== "string" || raw === "")
        throw new UndeliverableMessage("email-changed message has no newEmail");
      const newEmail = raw.replace(/[\p{Cc}\p{Cf}]/gu, "").slice(0, 254);
      return de
        ? mail(language, "Ihre Anmeldeadresse wurde geändert", [
            `Die Anmeldeadresse Ihres Kontos ist jetzt ${newEmail}; alle Sitzungen wurden beendet.`,
            "Wenn Sie das nicht waren, wenden Sie sich sofort an das Studienteam.",
          ])
        : mail(language, "Your sign-in address was changed", [
            `Your account's sign-in address is now ${newEmail}; every session was signed out.`,
            "If this was not you, contact the study team at once.",
          ]);
    }
    default:
      return null;
  }
}
