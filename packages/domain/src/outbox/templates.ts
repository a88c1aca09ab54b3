import { ACCOUNT_DELETED_TEMPLATE } from "../participant-accounts/account-message-types";
import { renderSignInMail } from "../participant-accounts/sign-in-mails";
import { renderLifecycleMail } from "../participant-accounts/lifecycle/lifecycle-mails";
import { escapeHtml, htmlDocument, mailLanguage, type MailLanguage, type RenderedMail } from "../mail/mail-document";
import { UndeliverableMessage } from "../mail/undeliverable-message";

/** Plain text as an HTML paragraph. */
function paragraph(text: string): string {
  return `<p>${escapeHtml(text)}</p>`;
}

function linkParagraph(url: string): string {
  const href = escapeHtml(url);
  return `<p><a href="${href}">${href}</a></p>`;
}

function resetLink(payload: Record<string, unknown>): string {
  const value = payload.resetUrl;
  // The link is the whole point of the mail: without a usable one, no retry helps.
  if (typeof value !== "string" || !URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
    throw new UndeliverableMessage("password-reset message has no valid resetUrl in its payload");
  }
  return value;
}

function hours(payload: Record<string, unknown>, language: MailLanguage): string | null {
  const value = payload.validForHours;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) return null;
  const amount = value.toLocaleString(language === "de" ? "de-DE" : "en-GB");
  if (language === "de") return `${amount} ${value === 1 ? "Stunde" : "Stunden"}`;
  return `${amount} ${value === 1 ? "hour" : "hours"}`;
}

function passwordReset(language: MailLanguage, payload: Record<string, unknown>): RenderedMail {
  const link = resetLink(payload);
  const validFor = hours(payload, language);
  if (language === "de") {
    const validity = validFor ? ` Der Link ist ${validFor} gültig.` : "";
    const intro = "Jemand hat angefordert, das Passwort Ihres Kontos zurückzusetzen.";
    const action = `Über diesen Link wählen Sie ein neues Passwort.${validity}`;
    const ignore =
      "Wenn Sie das nicht angefordert haben, ignorieren Sie diese E-Mail; Ihr Passwort bleibt unverändert.";
    return {
      subject: "Passwort zurücksetzen",
      text: `${intro}\n\n${action}\n\n${link}\n\n${ignore}\n`,
      html: htmlDocument(language, [paragraph(intro), paragraph(action), linkParagraph(link), paragraph(ignore)]),
    };
  }
  const validity = validFor ? ` The link is valid for ${validFor}.` : "";
  const intro = "Someone asked to reset the password of your account.";
  const action = `Open this link to choose a new password.${validity}`;
  const ignore = "If you did not ask for this, ignore this e-mail; your password stays as it is.";
  return {
    subject: "Reset your password",
    text: `${intro}\n\n${action}\n\n${link}\n\n${ignore}\n`,
    html: htmlDocument(language, [paragraph(intro), paragraph(action), linkParagraph(link), paragraph(ignore)]),
  };
}

const PASSWORD_CHANGED: Record<MailLanguage, { subject: string; lines: string[] }> = {
  en: {
    subject: "Your password was changed",
    lines: [
      "The password of your account was just changed, and every other session was signed out.",
      "If this was you, there is nothing to do. If it was not, reset your password at once and contact the study team.",
    ],
  },
  de: {
    subject: "Ihr Passwort wurde geändert",
    lines: [
      "Das Passwort Ihres Kontos wurde soeben geändert, und alle anderen Sitzungen wurden beendet.",
      "Wenn Sie das waren, ist nichts weiter zu tun. Wenn nicht, setzen Sie Ihr Passwort sofort zurück und wenden Sie sich an das Studienteam.",
    ],
  },
};

function passwordChanged(language: MailLanguage): RenderedMail {
  const { subject, lines } = PASSWORD_CHANGED[language];
  return { subject, text: `${lines.join("\n\n")}\n`, html: htmlDocument(language, lines.map(paragraph)) };
}

function verifyLink(payload: Record<string, unknown>): string {
  const value = payload.verifyUrl;
  if (typeof value !== "string" || !URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
    throw new UndeliverableMessage("email-change-verify message has no valid verifyUrl in its payload");
  }
  return value;
}

/** To the new address of an e-mail change: the link that makes it the account's address. */
function emailChangeVerify(language: MailLanguage, payload: Record<string, unknown>): RenderedMail {
  const link = verifyLink(payload);
  const validFor = hours(payload, language);
  if (language === "de") {
    const intro = "Jemand möchte diese Adresse als Anmeldeadresse eines Kontos verwenden.";
    const action = `Öffnen Sie diesen Link, um die Änderung zu bestätigen.${validFor ? ` Der Link ist ${validFor} gültig.` : ""}`;
    const ignore = "Wenn Sie das nicht waren, ignorieren Sie diese E-Mail; es ändert sich nichts.";
    return {
      subject: "Neue E-Mail-Adresse bestätigen",
      text: `${intro}\n\n${action}\n\n${link}\n\n${ignore}\n`,
      html: htmlDocument(language, [paragraph(intro), paragraph(action), linkParagraph(link), paragraph(ignore)]),
    };
  }
  const intro = "Someone wants to use this address to sign in to an account.";
  const action = `Open this link to confirm the change.${validFor ? ` The link is valid for ${validFor}.` : ""}`;
  const ignore = "If this was not you, ignore this e-mail; nothing changes.";
  return {
    subject: "Confirm your new e-mail address",
    text: `${intro}\n\n${action}\n\n${link}\n\n${ignore}\n`,
    html: htmlDocument(language, [paragraph(intro), paragraph(action), linkParagraph(link), paragraph(ignore)]),
  };
}

/** To the current address of an e-mail change: a notice, so a taken-over session is noticed. */
function emailChangeRequested(language: MailLanguage, payload: Record<string, unknown>): RenderedMail {
  const raw = payload.newEmail;
  if (typeof raw !== "string" || raw === "") {
    throw new UndeliverableMessage("email-change-requested message has no newEmail in its payload");
  }
  // one line, no control characters: the address was validated, but the mail must not trust that
  const newEmail = raw.replace(/[\p{Cc}\p{Cf}]/gu, "").slice(0, 254);
  const lines =
    language === "de"
      ? [
          `Für Ihr Konto wurde beantragt, die Anmeldeadresse in ${newEmail} zu ändern. Sie ändert sich erst, wenn die neue Adresse bestätigt ist.`,
          "Wenn Sie das nicht waren, ändern Sie sofort Ihr Passwort und wenden Sie sich an das Studienteam.",
        ]
      : [
          `A change of your account's sign-in address to ${newEmail} was requested. It takes effect only once the new address is confirmed.`,
          "If this was not you, change your password at once and contact the study team.",
        ];
  const subject =
    language === "de" ? "Änderung Ihrer E-Mail-Adresse beantragt" : "Change of your e-mail address requested";
  return { subject, text: `${lines.join("\n\n")}\n`, html: htmlDocument(language, lines.map(paragraph)) };
}

const ACCOUNT_DELETED: Record<MailLanguage, { subject: string; lines: string[] }> = {
  en: {
    subject: "Your account was deleted",
    lines: [
      "Your account has been deleted, as you asked. You can no longer sign in with it, and you have left every study you took part in.",
      "Study data you already submitted is kept without your account, as the studies' consent described. If you did not ask for this, contact the study team.",
    ],
  },
  de: {
    subject: "Ihr Konto wurde gelöscht",
    lines: [
      "Ihr Konto wurde wie gewünscht gelöscht. Sie können sich damit nicht mehr anmelden und haben alle Studien verlassen, an denen Sie teilgenommen haben.",
      "Bereits übermittelte Studiendaten bleiben ohne Ihr Konto erhalten, wie in der Einwilligung der Studien beschrieben. Wenn Sie das nicht veranlasst haben, wenden Sie sich an das Studienteam.",
    ],
  },
};

/** After an account's deletion, to the address it had: the only mail that needs no payload and no account. */
function accountDeleted(language: MailLanguage): RenderedMail {
  const { subject, lines } = ACCOUNT_DELETED[language];
  return { subject, text: `${lines.join("\n\n")}\n`, html: htmlDocument(language, lines.map(paragraph)) };
}

/**
 * A row naming no built-in template and no study (one written by hand, or left from before study
 * messages needed a template): listing its payload could show what nobody chose to show.
 */
function noBuiltInTemplate(template: string): never {
  // the name comes from the row: one line, so that it cannot forge a line of the log or the listing
  const name = template.replace(/[\p{Cc}\p{Cf}]/gu, " ").slice(0, 200);
  throw new UndeliverableMessage(`no built-in template "${name}", and the message names no study to take one from`);
}

/**
 * Renders an outbox row's built-in template: the account mails (password-reset, password-changed,
 * email-change-verify, email-change-requested, account-deleted, and the sign-in mails). Each takes
 * from the payload only what it needs (a link, a code, the new address), whatever else is there.
 * Participant messages are not among them: they go out through their study's templates only.
 *
 * @throws UndeliverableMessage when the payload lacks what the template needs, or the name is
 *   no built-in template.
 */
export function renderMail(template: string, language: string | null, payload: Record<string, unknown>): RenderedMail {
  const chosen = mailLanguage(language);
  switch (template) {
    case "password-reset":
      return passwordReset(chosen, payload);
    case "password-changed":
      return passwordChanged(chosen);
    case "email-change-verify":
      return emailChangeVerify(chosen, payload);
    case "email-change-requested":
      return emailChangeRequested(chosen, payload);
    case ACCOUNT_DELETED_TEMPLATE:
      return accountDeleted(chosen);
    default:
      // the sign-in mails (participant-accounts/sign-in-mails.ts), the account lifecycle's (participant-accounts/lifecycle/)
      return (
        renderSignInMail(template, chosen, payload) ??
        renderLifecycleMail(template, chosen, payload) ??
        noBuiltInTemplate(template)
      );
  }
}
