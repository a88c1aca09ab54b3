/**
 * The management and messaging documents of a case-backend instance for tests, shaped as its Go
 * types write them with the mongo driver: pkg/db/management-user/types.go (`omitempty` on every
 * field, time.Time as BSON dates) and pkg/messaging/types (EmailTemplate, SMSTemplate,
 * ScheduledEmail, OutgoingEmail: no omitempty but studyKey, int64 Unix seconds, nil pointers as null).
 */
import { Long, ObjectId } from "bson";
import type { CaseImportOptions } from "@studyflow/domain/case-import";
import { CASE_PASSWORD_HASH, caseStudy, caseUser } from "./case-dump";

const int64 = (value: number) => Long.fromNumber(value);
const at = (seconds: number) => new Date(seconds * 1000);

/** ManagementUser */
export function caseManagementUser(sub: string, over: { isAdmin?: boolean; provider?: string } = {}) {
  return {
    _id: new ObjectId(),
    sub,
    email: `${sub}@example.org`,
    username: `Name ${sub}`,
    provider: over.provider ?? "ms-entra-id",
    imageUrl: `https://img.example.org/${sub}.png`,
    ...(over.isAdmin ? { isAdmin: true } : {}),
    lastLoginAt: at(1_700_000_000),
    createdAt: at(1_690_000_000),
  };
}

/** Permission (omitempty: no limiter when there is none). */
export function casePermission(
  subjectId: ObjectId,
  subjectType: "management-user" | "service-account",
  resourceType: string,
  resourceKey: string,
  action: string,
  limiter?: Record<string, string>[],
) {
  return {
    _id: new ObjectId(),
    subjectId: subjectId.toHexString(),
    subjectType,
    resourceType,
    resourceKey,
    action,
    ...(limiter ? { limiter } : {}),
  };
}

/** ServiceUser */
export function caseServiceUser(label: string) {
  return { _id: new ObjectId(), label, description: `${label} integration`, createdAt: at(1_695_000_000) };
}

/** ServiceUserAPIKey: the key as GenerateUniqueTokenString makes it (39 lowercase base32), stored as is. */
/** A key as case-backend's GenerateUniqueTokenString makes one: 24 bytes (6 of time, 18 random), base32, lower case. */
export const CASE_API_KEY = "aaaadc6p4vuaaaicamcakbqhbaequcymbuha6ea";

export function caseServiceUserApiKey(serviceUser: ObjectId) {
  return {
    _id: new ObjectId(),
    serviceUserId: serviceUser.toHexString(),
    key: CASE_API_KEY,
    expiresAt: at(1_900_000_000),
    createdAt: at(1_695_000_000),
  };
}

/** AppRoleTemplate */
export function caseAppRoleTemplate(appName: string, role: string) {
  return {
    _id: new ObjectId(),
    appName,
    role,
    requiredPermissions: [
      { resourceType: "study", resourceKey: "*", action: "read-study-config" },
      { resourceType: "messaging", resourceKey: "global-email-templates", action: "*" },
    ],
    createdAt: at(1_695_000_000),
  };
}

/** AppRole */
export function caseAppRole(subject: ObjectId, appName: string, role: string) {
  return {
    _id: new ObjectId(),
    subjectId: subject.toHexString(),
    subjectType: "management-user",
    appName,
    role,
    createdAt: at(1_695_000_000),
  };
}

const translation = (languageCode: string, subject: string, html: string) => ({
  languageCode,
  subject,
  templateDef: Buffer.from(html).toString("base64"),
});

/** EmailTemplate: global without studyKey (omitempty), a study's with it. */
export function caseEmailTemplate(messageType: string, studyKey?: string) {
  return {
    _id: new ObjectId(),
    messageType,
    ...(studyKey ? { studyKey } : {}),
    defaultLanguage: "nl",
    headerOverrides: studyKey
      ? { from: "study@example.org", sender: "", replyTo: ["r@example.org"], noReplyTo: false }
      : null,
    translations: [
      translation("nl", `Onderwerp ${messageType}`, "<p>Hallo {{.name}}</p>"),
      translation("en", `Subject ${messageType}`, "<p>Hello {{.name}}</p>"),
    ],
  };
}

/** SMSTemplate */
export function caseSmsTemplate(messageType: string) {
  return {
    _id: new ObjectId(),
    messageType,
    defaultLanguage: "nl",
    from: "Tekenradar",
    translations: [{ languageCode: "nl", subject: "", templateDef: Buffer.from("Code: {{.code}}").toString("base64") }],
  };
}

/** ScheduledEmail */
export function caseScheduledEmail(type: string, studyKey: string, condition: unknown = null) {
  return {
    _id: new ObjectId(),
    template: {
      _id: ObjectId.createFromHexString("000000000000000000000000"),
      messageType: "weekly",
      defaultLanguage: "nl",
      headerOverrides: null,
      translations: [translation("nl", "Wekelijks", "<p>Week</p>")],
    },
    type,
    studyKey,
    condition,
    nextTime: int64(1_800_000_000),
    period: int64(7 * 24 * 3600),
    label: `weekly ${type}`,
    until: int64(0),
  };
}

/** OutgoingEmail, as case-backend queued it (rendered, not yet sent: sentAt is time.Time{}). */
export function caseOutgoingEmail(userId: ObjectId, to: string) {
  return {
    _id: new ObjectId(),
    messageType: "study-reminder",
    userId: userId.toHexString(),
    to: [to],
    subject: "Reminder",
    headerOverrides: null,
    content: "<p>Please fill in your survey</p>",
    addedAt: int64(1_700_000_000),
    sentAt: new Date("0001-01-01T00:00:00Z"),
    expiresAt: int64(1_900_000_000),
    highPrio: false,
    lastSendAttempt: int64(0),
  };
}

/** A CASE instance's management and messaging collections, with one study and one account. */
export function managementDump() {
  const nina = caseManagementUser("nina");
  const admin = caseManagementUser("boss", { isAdmin: true });
  const robot = caseServiceUser("exporter");
  const ann = caseUser("ann@example.org", CASE_PASSWORD_HASH, [new ObjectId()]);
  const ghost = new ObjectId();
  return {
    nina,
    admin,
    robot,
    ann,
    spec: {
      instance: "tr",
      prefix: "case_",
      databases: {
        studyDB: { "study-infos": [caseStudy("flu")] },
        users: {
          users: [ann],
          management_users: [nina, admin],
          service_users: [robot],
          service_user_api_keys: [caseServiceUserApiKey(robot._id)],
          permissions: [
            casePermission(nina._id, "management-user", "study", "flu", "read-study-config"),
            casePermission(nina._id, "management-user", "study", "flu", "update-survey", [{ surveyKey: "intake" }]),
            casePermission(robot._id, "service-account", "study", "flu", "get-responses"),
            casePermission(nina._id, "management-user", "messaging", "global-email-templates", "*"),
            casePermission(ghost, "management-user", "study", "flu", "delete-study"),
          ],
          app_role_templates: [caseAppRoleTemplate("case-admin", "researcher")],
          app_roles: [caseAppRole(nina._id, "case-admin", "researcher")],
        },
        messageDB: {
          "email-templates": [caseEmailTemplate("registration"), caseEmailTemplate("study-reminder", "flu")],
          "sms-templates": [caseSmsTemplate("verification-code")],
          "auto-messages": [
            caseScheduledEmail("all-users", ""),
            caseScheduledEmail("study-participants", "flu", { dtype: "exp", exp: { name: "hasStudyStatus" } }),
          ],
          "outgoing-emails": [caseOutgoingEmail(ann._id, "ann@example.org")],
          "sent-emails": [{ _id: new ObjectId(), messageType: "registration" }],
        },
      },
    },
  };
}

/** The import of a dump shaped as managementDump's: every part, small batches. */
export const managementImportOptions = (dumpDir: string, over: Partial<CaseImportOptions> = {}): CaseImportOptions => ({
  dumpDir,
  instance: "tr",
  dbPrefix: "case_",
  only: ["studies", "users", "management", "messages"],
  dryRun: false,
  replace: false,
  batchSize: 2,
  ...over,
});
