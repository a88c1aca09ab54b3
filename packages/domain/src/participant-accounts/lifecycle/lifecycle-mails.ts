import { renderSignInMail } from "../sign-in-mails";
import { escapeHtml, htmlDocument, type MailLanguage, type RenderedMail } from "../../mail/mail-document";
import {
  ACCOUNT_DELETED_AFTER_INACTIVITY_TEMPLATE,
  ACCOUNT_INACTIVITY_TEMPLATE,
  REGISTRATION_TEMPLATE,
} from "../account-message-types";

function mail(language: MailLanguage, subject: string, lines: string[]): RenderedMail {
  return {
    subject,
    text: `${lines.join("\n\n")}\n`,
    html: htmlDocument(
      language,
      lines.map((line) => `<p>${escapeHtml(line)}</p>`),
    ),
  };
}

function days(payload: Record<string, unknown>): number | null {
  const value = payload.deleteAfterDays;
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : null;
}

function inactivityNotice(language: MailLanguage, payload: Record<string, unknown>): RenderedMail {
  const within = days(payload);
  if (language === "de") {
    const when = within ? `in ${within} ${within === 1 ? "Tag" : "Tagen"}` : "bald";
    return mail(language, "Ihr Konto wird wegen Inaktivität gelöscht", [
      "Sie haben sich seit langer Zeit nicht mehr bei Ihrem Konto angemeldet.",
      `Wenn Sie sich nicht anmelden, wird Ihr Konto ${when} gelöscht, und Sie verlassen alle Studien, an denen Sie teilnehmen. Melden Sie sich einfach an, um es zu behalten.`,
    ]);
  }
  const when = within ? `in ${within} ${within === 1 ? "day" : "days"}` : "soon";
  return mail(language, "Your account will be deleted for inactivity", [
    "You have not signed in to your account for a long time.",
    `Unless you sign in, your account will be deleted ${when} and you will leave every study you take part in. Simply sign in to keep it.`,
  ]);
}

function deletedAfterInactivity(language: MailLanguage): RenderedMail {
  if (language === "de") {
    return mail(language, "Ihr Konto wurde wegen Inaktivität gelöscht", [
      "Ihr Konto wurde gelöscht, weil Sie sich nach unserem Hinweis nicht mehr angemeldet haben. Sie haben alle Studien verlassen, an denen Sie teilgenommen haben.",
      "Bereits übermittelte Studiendaten bleiben ohne Ihr Konto erhalten, wie in der Einwilligung der Studien beschrieben.",
    ]);
  }
  return mail(language, "Your account was deleted for inactivity", [
    "Your account has been deleted because you did not sign in after our notice. You have left every study you took part in.",
    "Study data you already submitted is kept without your account, as the studies' consent described.",
  ]);
}

/**
 * The built-in renderings of the lifecycle mails, for an instance without CASE templates of these
 * types; null for any other template. The reminder is the sign-up confirmation mail again (its
 * payload carries the same verifyUrl and validForHours).
 */
export function renderLifecycleMail(
  template: string,
  language: MailLanguage,
  payload: Record<string, unknown>,
): RenderedMail | null {
  switch (template) {
    case REGISTRATION_TEMPLATE:
      return renderSignInMail("verify-email", language, payload);
    case ACCOUNT_INACTIVITY_TEMPLATE:
      return inactivityNotice(language, payload);
    case ACCOUNT_DELETED_AFTER_INACTIVITY_TEMPLATE:
      return deletedAfterInactivity(language);
    default:
      return null;
  }
}
