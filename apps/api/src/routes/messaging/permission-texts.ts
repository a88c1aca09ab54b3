/**
 * The messaging permission each operation requires, as the sentence closing its description in the
 * OpenAPI document (one per resource key of resource type `messaging`).
 */

export const GLOBAL_EMAIL_TEMPLATES_PERMISSION =
  "Requires permission `messaging/global-email-templates/*` (admins always pass).";

export const STUDY_EMAIL_TEMPLATES_PERMISSION =
  "Requires permission `messaging/study-email-templates/*`, unlimited or limited to `{studyKey}` of the study " +
  "(admins always pass).";

export const SMS_TEMPLATES_PERMISSION = "Requires permission `messaging/sms-templates/*` (admins always pass).";

export const SCHEDULED_EMAILS_PERMISSION = "Requires permission `messaging/scheduled-emails/*` (admins always pass).";
