import { describe, expect, it } from "vitest";
import { UndeliverableMessage } from "@studyflow/domain/mail";
import { renderMail } from "@studyflow/domain/outbox";

describe("built-in account lifecycle mails (an instance without CASE templates of these types)", () => {
  it("renders the reminder as the sign-up confirmation with its link", () => {
    const mail = renderMail("registration", "en", {
      verifyUrl: "https://app.example.org/link/verify-contact?token=abc",
      validForHours: 168,
    });
    expect(mail.text).toContain("https://app.example.org/link/verify-contact?token=abc");
    expect(mail.html).toContain("https://app.example.org/link/verify-contact?token=abc");
  });

  it("refuses a reminder without a usable link", () => {
    expect(() => renderMail("registration", "en", { verifyUrl: "javascript:alert(1)" })).toThrow(UndeliverableMessage);
  });

  it("renders the inactivity notice with the grace period, in German too", () => {
    const en = renderMail("account-inactivity", "en", { deleteAfterDays: 14 });
    expect(en.subject).toBe("Your account will be deleted for inactivity");
    expect(en.text).toContain("in 14 days");
    const de = renderMail("account-inactivity", "de-CH", { deleteAfterDays: 1 });
    expect(de.text).toContain("in 1 Tag ");
  });

  it("renders the deletion after inactivity without any payload", () => {
    const mail = renderMail("account-deleted-after-inactivity", "en", {});
    expect(mail.subject).toBe("Your account was deleted for inactivity");
    expect(mail.html).toContain("<p>");
  });
});
