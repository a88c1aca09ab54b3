import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { managementToken, participantUser, postJson, researcher, setupStudy } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

/**
 * The routers as mounted: every documented operation at its full path, each router's auth
 * covering exactly the paths below its prefix, and the public routes staying public (sign-up,
 * sign-in and the mailed-token routes of the participant API, the public study list).
 */
describe("routers and their auth boundaries", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "study-a" });
  });
  afterAll(async () => {
    await t.close();
  });

  const management = [
    "POST /v1/studies/study-a/participants/p1/responses",
    "GET /v1/studies/study-a/participants/p1/responses",
    "POST /v1/studies/study-a/participants/virtual",
    "POST /v1/studies/study-a/participants/merge",
    "POST /v1/studies/study-a/participants/p1/events",
    "POST /v1/studies/study-a/participants/p1/remove-session",
    "POST /v1/studies/study-a/participants/p1/reports",
    "PUT /v1/studies/study-a/participants/p1/reports/r1",
    "GET /v1/studies/study-a/surveys/intake",
    "POST /v1/studies/study-a/run-actions/participants/",
    "POST /v1/studies/study-a/run-actions/validate",
    "GET /v1/studies/study-a/run-actions/participants/tasks",
    "GET /v1/studies/study-a/run-actions/participants/task/t1",
    "GET /v1/studies/study-a/run-actions/participants/task/t1/result",
    "POST /v1/studies/study-a/run-actions/participants/task/t1/cancel",
    "GET /v1/studies/study-a/run-actions/participants/task/t1/events",
    "PUT /v1/studies/study-a/track-account",
    "GET /v1/studies/study-a/daily-export-config",
    "POST /v1/studies",
    "DELETE /v1/studies/study-a",
    "PUT /v1/studies/study-a/status",
    "PUT /v1/studies/study-a/notification-subscriptions",
    "GET /v1/studies/study-a/permissions",
    "GET /v1/studies/study-a/study-code-list/list-keys",
    "PUT /v1/studies/study-a/study-counters/visits",
    "POST /v1/studies/study-a/surveys/intake",
    "GET /v1/studies/study-a/rules/versions",
    "POST /v1/studies/study-a/run-actions/participants/p1",
    "POST /v1/studies/study-a/run-actions/previous-responses/",
    "PUT /v1/studies/study-a/participants/p1",
    "GET /v1/auth/permissions",
    "POST /v1/auth/extend-session",
    "GET /v1/auth/renew-token/s1",
    "GET /v1/messaging/email-templates/global-templates",
    "POST /v1/messaging/sms-templates",
    "GET /v1/messaging/scheduled-emails",
    "GET /v1/user-management/management-users",
    "POST /v1/user-management/service-accounts",
    "POST /v1/user-management/participant-users/request-deletion",
    "GET /v1/studies/study-a/task-retention",
    "PUT /v1/studies/study-a/task-retention",
    "PUT /v1/studies/study-a/daily-export-config",
    "GET /v1/studies/study-a/rule-failures",
    "GET /v1/studies",
    "GET /v1/studies/study-a",
    "GET /v1/studies/study-a/participant-counts",
    "PATCH /v1/studies/study-a",
    "GET /v1/studies/study-a/audit-log",
    "GET /v1/studies/study-a/messages",
    "GET /v1/studies/study-a/code-lists",
    "POST /v1/studies/study-a/code-lists/kits/codes",
    "GET /v1/studies/study-a/code-lists/kits/codes",
    "GET /v1/studies/study-a/code-lists/kits/count",
    "DELETE /v1/studies/study-a/code-lists/kits/codes/K1",
    "GET /v1/studies/study-a/variables",
    "GET /v1/studies/study-a/variables/kitStock",
    "PUT /v1/studies/study-a/variables/kitStock",
    "DELETE /v1/studies/study-a/variables/kitStock",
    "GET /v1/studies/study-a/subscriptions",
    "POST /v1/studies/study-a/subscriptions",
    "DELETE /v1/studies/study-a/subscriptions/1",
    "GET /v1/studies/study-a/message-templates",
    "GET /v1/studies/study-a/message-templates/weekly-reminder/en",
    "PUT /v1/studies/study-a/message-templates/weekly-reminder/en",
    "DELETE /v1/studies/study-a/message-templates/weekly-reminder/en",
    "GET /v1/studies/study-a/rules",
    "POST /v1/studies/study-a/rules",
    "GET /v1/studies/study-a/rules/current",
    "GET /v1/studies/study-a/timer",
    "PUT /v1/studies/study-a/timer",
    "GET /v1/studies/study-a/timer/ticks",
    "POST /v1/studies/study-a/surveys",
    "GET /v1/studies/study-a/surveys",
    "GET /v1/studies/study-a/surveys/intake/versions",
    "GET /v1/studies/study-a/surveys/intake/versions/26-01-1",
    "POST /v1/studies/study-a/surveys/intake/unpublish",
    "GET /v1/studies/study-a/data-exporter/survey-info/",
    "GET /v1/studies/study-a/data-exporter/responses/count",
    "POST /v1/studies/study-a/data-exporter/responses/",
    "GET /v1/studies/study-a/data-exporter/participants/count",
    "POST /v1/studies/study-a/data-exporter/participants/",
    "GET /v1/studies/study-a/data-exporter/reports/count",
    "POST /v1/studies/study-a/data-exporter/reports/",
    "GET /v1/studies/study-a/data-exporter/responses/task/t1",
    "GET /v1/studies/study-a/data-exporter/responses/task/t1/result",
    "GET /v1/studies/study-a/data-exporter/participants/task/t1",
    "GET /v1/studies/study-a/data-exporter/participants/task/t1/result",
    "GET /v1/studies/study-a/data-exporter/reports/task/t1",
    "GET /v1/studies/study-a/data-exporter/reports/task/t1/result",
    "GET /v1/studies/study-a/data-exporter/responses/daily-exports",
    "GET /v1/studies/study-a/data-exporter/responses/daily-exports/eA",
    "POST /v1/studies/study-a/data-exporter/confidential-responses/",
    "GET /v1/studies/study-a/data-exporter/confidential-responses/",
    "GET /v1/studies/study-a/data-exporter/confidential-responses/eA",
    "GET /v1/studies/study-a/export-config",
  ];
  // the participant accounts: management tokens, an admin's alone
  const participantAccounts = [
    "GET /v1/participant-users/deletions",
    "GET /v1/participant-users/deletions/00000000-0000-0000-0000-000000000000",
    "GET /v1/participant-users?email=someone@example.org",
    "GET /v1/participant-users/u1",
    "DELETE /v1/participant-users/u1",
    "POST /v1/participant-users/u1/lock",
    "POST /v1/participant-users/u1/unlock",
    "POST /v1/participant-users/u1/sign-out",
  ];
  const participant = [
    "POST /v1/study-service/events/study-a/enter",
    "POST /v1/study-service/events/study-a/leave",
    "POST /v1/study-service/events/study-a/merge-temporary-participant",
    "POST /v1/study-service/events/study-a/merge-virtual-participant",
    "GET /v1/study-service/virtual-participants/study-a?key=k&value=v",
    "POST /v1/study-service/events/study-a/submit",
    "POST /v1/study-service/events/study-a/custom",
    "GET /v1/study-service/participant/studies",
    "GET /v1/study-service/participant/studies/study-a",
    "GET /v1/study-service/participant/studies/study-a/surveys/intake",
    "POST /v1/auth/logout",
    "GET /v1/auth/otp",
    "POST /v1/auth/otp/verify",
    "POST /v1/auth/resend-email-verification",
    "GET /v1/user",
    "DELETE /v1/user",
    "POST /v1/user/profiles",
    "PUT /v1/user/profiles",
    "POST /v1/user/profiles/remove",
    "POST /v1/user/password",
    "POST /v1/user/change-account-email",
    "POST /v1/user/change-phone-number",
    "GET /v1/user/request-phone-number-verification",
    "PUT /v1/user/contact-preferences",
    "PUT /v1/user/preferred-language",
    "GET /v1/user/attributes",
    "POST /v1/user/attributes",
    "DELETE /v1/user/attributes/a1",
    "GET /v1/auth/token/validate",
    "GET /v1/auth/token/revoke",
    "GET /v1/study-service/studies/participating",
    "GET /v1/study-service/participant-data/study-a/survey/intake?pid=p",
    "POST /v1/study-service/participant-data/study-a/files",
    "GET /v1/study-service/participant-data/study-a/files?pid=p",
    "GET /v1/study-service/participant-data/study-a/files/f1?pid=p",
    "DELETE /v1/study-service/participant-data/study-a/files/f1?pid=p",
    "GET /v1/study-service/participant-data/study-a/surveys?pids=p",
    "GET /v1/study-service/participant-data/study-a/participant-state?pid=p",
    "GET /v1/study-service/participant-data/study-a/submission-history?pids=p",
    "GET /v1/study-service/participant-data/study-a/responses?pid=p",
    "GET /v1/study-service/participant-data/study-a/confidential-response?pid=p&key=k",
    "GET /v1/study-service/participant-data/study-a/linking-code?pid=p&key=k",
    "GET /v1/study-service/participant-data/study-a/reports?pid=p",
  ];
  const request = (operation: string, token?: string) => {
    const [method, path] = operation.split(" ") as [string, string];
    return method === "GET" || method === "DELETE"
      ? t.app.request(path, { method, headers: token ? { Authorization: `Bearer ${token}` } : {} })
      : postJson(t, path, {}, token, method);
  };

  it("documents exactly these operations, with the security of their router", async () => {
    const doc = await (await t.app.request("/openapi.json")).json();
    const documented = Object.entries(doc.paths as Record<string, Record<string, { security?: unknown }>>).flatMap(
      ([path, methods]) =>
        Object.entries(methods).map(([method, operation]) => [`${method.toUpperCase()} ${path}`, operation.security]),
    );
    // a management token or a service account's API key
    const managementSecurity = [{ managementBearer: [] }, { serviceApiKey: [] }];
    const participantSecurity = [{ participantBearer: [] }];
    expect(Object.fromEntries(documented)).toEqual({
      "GET /healthz": undefined,
      "GET /readyz": undefined,
      "POST /v1/auth/signup": undefined,
      "POST /v1/auth/login": undefined,
      "POST /v1/auth/token/renew": participantSecurity,
      "POST /v1/auth/logout": participantSecurity,
      "GET /v1/auth/otp": participantSecurity,
      "POST /v1/auth/otp/verify": participantSecurity,
      "POST /v1/auth/verify-email": undefined,
      "POST /v1/auth/resend-email-verification": participantSecurity,
      "POST /v1/auth/temptoken-info": undefined,
      "POST /v1/auth/login-with-temptoken": undefined,
      "GET /v1/auth/token/validate": participantSecurity,
      "GET /v1/auth/token/revoke": participantSecurity,
      "POST /v1/password-reset/initiate": undefined,
      "POST /v1/password-reset/get-infos": undefined,
      "POST /v1/password-reset/reset": undefined,
      "GET /v1/user": participantSecurity,
      "DELETE /v1/user": participantSecurity,
      "POST /v1/user/profiles": participantSecurity,
      "PUT /v1/user/profiles": participantSecurity,
      "POST /v1/user/profiles/remove": participantSecurity,
      "POST /v1/user/password": participantSecurity,
      "POST /v1/user/change-account-email": participantSecurity,
      "POST /v1/user/change-phone-number": participantSecurity,
      "GET /v1/user/request-phone-number-verification": participantSecurity,
      "PUT /v1/user/contact-preferences": participantSecurity,
      "PUT /v1/user/preferred-language": participantSecurity,
      "GET /v1/user/attributes": participantSecurity,
      "POST /v1/user/attributes": participantSecurity,
      "DELETE /v1/user/attributes/{attributeID}": participantSecurity,
      "POST /v1/unsubscribe-newsletter": undefined,
      "POST /v1/studies/{studyKey}/participants/{participantID}/responses": managementSecurity,
      "POST /v1/studies/{studyKey}/run-actions/participants/": managementSecurity,
      "POST /v1/studies/{studyKey}/run-actions/validate": managementSecurity,
      "GET /v1/studies/{studyKey}/run-actions/participants/tasks": managementSecurity,
      "GET /v1/studies/{studyKey}/run-actions/participants/task/{taskID}": managementSecurity,
      "GET /v1/studies/{studyKey}/run-actions/participants/task/{taskID}/result": managementSecurity,
      "POST /v1/studies/{studyKey}/run-actions/participants/task/{taskID}/cancel": managementSecurity,
      "GET /v1/studies/{studyKey}/run-actions/participants/task/{taskID}/events": managementSecurity,
      "POST /v1/studies/{studyKey}/surveys": managementSecurity,
      "GET /v1/studies/{studyKey}/surveys": managementSecurity,
      "GET /v1/studies/{studyKey}/surveys/{surveyKey}/versions": managementSecurity,
      "GET /v1/studies/{studyKey}/surveys/{surveyKey}/versions/{versionId}": managementSecurity,
      "POST /v1/studies/{studyKey}/surveys/{surveyKey}/unpublish": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/survey-info/": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/responses/count": managementSecurity,
      "POST /v1/studies/{studyKey}/data-exporter/responses/": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/participants/count": managementSecurity,
      "POST /v1/studies/{studyKey}/data-exporter/participants/": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/reports/count": managementSecurity,
      "POST /v1/studies/{studyKey}/data-exporter/reports/": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/responses/task/{taskID}": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/responses/task/{taskID}/result": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/participants/task/{taskID}": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/participants/task/{taskID}/result": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/reports/task/{taskID}": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/reports/task/{taskID}/result": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/responses/daily-exports": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/responses/daily-exports/{exportID}": managementSecurity,
      "POST /v1/studies/{studyKey}/data-exporter/confidential-responses/": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/confidential-responses/": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/confidential-responses/{exportID}": managementSecurity,
      "GET /v1/studies/{studyKey}/data-explorer/responses": managementSecurity,
      "DELETE /v1/studies/{studyKey}/data-explorer/responses": managementSecurity,
      "GET /v1/studies/{studyKey}/data-explorer/responses/{responseID}": managementSecurity,
      "DELETE /v1/studies/{studyKey}/data-explorer/responses/{responseID}": managementSecurity,
      "GET /v1/studies/{studyKey}/data-explorer/participants": managementSecurity,
      "GET /v1/studies/{studyKey}/data-explorer/participants/{participantID}": managementSecurity,
      "GET /v1/studies/{studyKey}/data-explorer/reports/keys": managementSecurity,
      "GET /v1/studies/{studyKey}/data-explorer/reports": managementSecurity,
      "GET /v1/studies/{studyKey}/data-explorer/reports/{reportID}": managementSecurity,
      "GET /v1/studies/{studyKey}/data-explorer/files": managementSecurity,
      "GET /v1/studies/{studyKey}/data-explorer/files/{fileID}": managementSecurity,
      "DELETE /v1/studies/{studyKey}/data-explorer/files/{fileID}": managementSecurity,
      "GET /v1/studies/{studyKey}/export-config": managementSecurity,
      "GET /v1/studies": managementSecurity,
      "GET /v1/studies/{studyKey}": managementSecurity,
      "PATCH /v1/studies/{studyKey}": managementSecurity,
      "GET /v1/studies/{studyKey}/participant-counts": managementSecurity,
      "PUT /v1/studies/{studyKey}/track-account": managementSecurity,
      "GET /v1/studies/{studyKey}/daily-export-config": managementSecurity,
      "GET /v1/studies/{studyKey}/task-retention": managementSecurity,
      "PUT /v1/studies/{studyKey}/task-retention": managementSecurity,
      "PUT /v1/studies/{studyKey}/daily-export-config": managementSecurity,
      "GET /v1/studies/{studyKey}/rule-failures": managementSecurity,
      "GET /v1/studies/{studyKey}/audit-log": managementSecurity,
      "GET /v1/studies/{studyKey}/messages": managementSecurity,
      "GET /v1/studies/{studyKey}/code-lists": managementSecurity,
      "POST /v1/studies/{studyKey}/code-lists/{listKey}/codes": managementSecurity,
      "GET /v1/studies/{studyKey}/code-lists/{listKey}/codes": managementSecurity,
      "GET /v1/studies/{studyKey}/code-lists/{listKey}/count": managementSecurity,
      "DELETE /v1/studies/{studyKey}/code-lists/{listKey}/codes/{code}": managementSecurity,
      "GET /v1/studies/{studyKey}/variables": managementSecurity,
      "GET /v1/studies/{studyKey}/variables/{key}": managementSecurity,
      "PUT /v1/studies/{studyKey}/variables/{key}": managementSecurity,
      "DELETE /v1/studies/{studyKey}/variables/{key}": managementSecurity,
      "GET /v1/studies/{studyKey}/rules": managementSecurity,
      "POST /v1/studies/{studyKey}/rules": managementSecurity,
      "GET /v1/studies/{studyKey}/rules/{version}": managementSecurity,
      "GET /v1/studies/{studyKey}/timer": managementSecurity,
      "PUT /v1/studies/{studyKey}/timer": managementSecurity,
      "GET /v1/studies/{studyKey}/timer/ticks": managementSecurity,
      "GET /v1/studies/{studyKey}/message-templates": managementSecurity,
      "GET /v1/studies/{studyKey}/message-templates/{messageType}/{language}": managementSecurity,
      "PUT /v1/studies/{studyKey}/message-templates/{messageType}/{language}": managementSecurity,
      "DELETE /v1/studies/{studyKey}/message-templates/{messageType}/{language}": managementSecurity,
      "GET /v1/studies/{studyKey}/subscriptions": managementSecurity,
      "POST /v1/studies/{studyKey}/subscriptions": managementSecurity,
      "DELETE /v1/studies/{studyKey}/subscriptions/{id}": managementSecurity,
      "POST /v1/study-service/events/{studyKey}/enter": participantSecurity,
      "POST /v1/study-service/events/{studyKey}/leave": participantSecurity,
      "POST /v1/study-service/events/{studyKey}/merge-temporary-participant": participantSecurity,
      "POST /v1/study-service/events/{studyKey}/submit": participantSecurity,
      "POST /v1/study-service/events/{studyKey}/custom": participantSecurity,
      "POST /v1/study-service/temp-participant/register": undefined,
      "GET /v1/study-service/temp-participant/survey": undefined,
      "GET /v1/study-service/temp-participant/surveys": undefined,
      "POST /v1/study-service/temp-participant/submit-response": undefined,
      "GET /v1/study-service/participant/studies": participantSecurity,
      "GET /v1/study-service/participant/studies/{studyKey}": participantSecurity,
      "GET /v1/study-service/participant/studies/{studyKey}/surveys/{surveyKey}": participantSecurity,
      "GET /v1/study-service/participant-data/{studyKey}/survey/{surveyKey}": participantSecurity,
      "POST /v1/study-service/participant-data/{studyKey}/files": participantSecurity,
      "GET /v1/study-service/participant-data/{studyKey}/files": participantSecurity,
      "GET /v1/study-service/participant-data/{studyKey}/files/{fileID}": participantSecurity,
      "DELETE /v1/study-service/participant-data/{studyKey}/files/{fileID}": participantSecurity,
      "GET /v1/study-service/participant-data/{studyKey}/surveys": participantSecurity,
      "GET /v1/study-service/participant-data/{studyKey}/participant-state": participantSecurity,
      "GET /v1/study-service/participant-data/{studyKey}/submission-history": participantSecurity,
      "GET /v1/study-service/participant-data/{studyKey}/responses": participantSecurity,
      "GET /v1/study-service/participant-data/{studyKey}/confidential-response": participantSecurity,
      "GET /v1/study-service/participant-data/{studyKey}/linking-code": participantSecurity,
      "GET /v1/study-service/participant-data/{studyKey}/reports": participantSecurity,
      "GET /v1/study-service/studies": undefined,
      "GET /v1/study-service/studies/participating": participantSecurity,
      "GET /v1/study-service/studies/{studyKey}": undefined,
      "GET /v1/study-service/studies/{studyKey}/variables": undefined,
      "GET /v1/study-service/studies/{studyKey}/variables/{variableKey}": undefined,
      "GET /v1/study-service/studies/{studyKey}/code-lists/has-code": undefined,
      "GET /v1/study-service/studies/{studyKey}/code-lists/available-count": undefined,
      "GET /v1/participant-users/deletions": managementSecurity,
      "GET /v1/participant-users/deletions/{deletionId}": managementSecurity,
      "GET /v1/participant-users": managementSecurity,
      "GET /v1/participant-users/{id}": managementSecurity,
      "DELETE /v1/participant-users/{id}": managementSecurity,
      "POST /v1/participant-users/{id}/lock": managementSecurity,
      "POST /v1/participant-users/{id}/unlock": managementSecurity,
      "POST /v1/participant-users/{id}/sign-out": managementSecurity,
      "POST /v1/auth/signin-with-idp": [],
      "POST /v1/auth/extend-session": managementSecurity,
      "GET /v1/auth/renew-token/{sessionID}": managementSecurity,
      "GET /v1/auth/permissions": managementSecurity,
      "PUT /v1/studies/{studyKey}/participants/{participantID}": managementSecurity,
      "GET /v1/studies/{studyKey}/participants/{participantID}/responses": managementSecurity,
      "POST /v1/studies/{studyKey}/participants/virtual": managementSecurity,
      "POST /v1/studies/{studyKey}/participants/merge": managementSecurity,
      "POST /v1/studies/{studyKey}/participants/{participantID}/events": managementSecurity,
      "POST /v1/studies/{studyKey}/participants/{participantID}/remove-session": managementSecurity,
      "POST /v1/studies/{studyKey}/participants/{participantID}/reports": managementSecurity,
      "PUT /v1/studies/{studyKey}/participants/{participantID}/reports/{reportID}": managementSecurity,
      "GET /v1/studies/{studyKey}/surveys/{surveyKey}": managementSecurity,
      "POST /v1/study-service/events/{studyKey}/merge-virtual-participant": participantSecurity,
      "GET /v1/study-service/virtual-participants/{studyKey}": participantSecurity,
      "POST /v1/studies/{studyKey}/run-actions/participants/{participantID}": managementSecurity,
      "POST /v1/studies/{studyKey}/run-actions/previous-responses/": managementSecurity,
      "GET /v1/studies/{studyKey}/run-actions/previous-responses/task/{taskID}": managementSecurity,
      "GET /v1/studies/{studyKey}/run-actions/previous-responses/task/{taskID}/result": managementSecurity,
      "POST /v1/studies/{studyKey}/run-actions/previous-responses/{participantID}": managementSecurity,
      "DELETE /v1/studies/{studyKey}/surveys/{surveyKey}/versions/{versionId}": managementSecurity,
      "POST /v1/studies/{studyKey}/surveys/{surveyKey}": managementSecurity,
      "POST /v1/studies": managementSecurity,
      "DELETE /v1/studies/{studyKey}": managementSecurity,
      "PUT /v1/studies/{studyKey}/status": managementSecurity,
      "PUT /v1/studies/{studyKey}/display-props": managementSecurity,
      "PUT /v1/studies/{studyKey}/is-default": managementSecurity,
      "PUT /v1/studies/{studyKey}/file-upload-config": managementSecurity,
      "GET /v1/studies/{studyKey}/notification-subscriptions": managementSecurity,
      "PUT /v1/studies/{studyKey}/notification-subscriptions": managementSecurity,
      "GET /v1/studies/{studyKey}/permissions": managementSecurity,
      "POST /v1/studies/{studyKey}/permissions": managementSecurity,
      "DELETE /v1/studies/{studyKey}/permissions/{permissionID}": managementSecurity,
      "POST /v1/studies/{studyKey}/variables": managementSecurity,
      "PUT /v1/studies/{studyKey}/variables/{key}/value": managementSecurity,
      "GET /v1/studies/{studyKey}/study-code-list/list-keys": managementSecurity,
      "GET /v1/studies/{studyKey}/study-code-list/codes": managementSecurity,
      "POST /v1/studies/{studyKey}/study-code-list/codes": managementSecurity,
      "DELETE /v1/studies/{studyKey}/study-code-list/codes": managementSecurity,
      "GET /v1/studies/{studyKey}/study-counters": managementSecurity,
      "POST /v1/studies/{studyKey}/study-counters/{scope}": managementSecurity,
      "PUT /v1/studies/{studyKey}/study-counters/{scope}": managementSecurity,
      "DELETE /v1/studies/{studyKey}/study-counters/{scope}": managementSecurity,
      "GET /v1/studies/{studyKey}/rules/versions": managementSecurity,
      "GET /v1/studies/{studyKey}/rules/versions/{id}": managementSecurity,
      "DELETE /v1/studies/{studyKey}/rules/versions/{id}": managementSecurity,
      "GET /v1/messaging/email-templates/global-templates": managementSecurity,
      "POST /v1/messaging/email-templates/global-templates": managementSecurity,
      "GET /v1/messaging/email-templates/global-templates/{messageType}": managementSecurity,
      "DELETE /v1/messaging/email-templates/global-templates/{messageType}": managementSecurity,
      "GET /v1/messaging/email-templates/study-templates": managementSecurity,
      "GET /v1/messaging/email-templates/study-templates/{studyKey}": managementSecurity,
      "POST /v1/messaging/email-templates/study-templates/{studyKey}": managementSecurity,
      "GET /v1/messaging/email-templates/study-templates/{studyKey}/{messageType}": managementSecurity,
      "DELETE /v1/messaging/email-templates/study-templates/{studyKey}/{messageType}": managementSecurity,
      "POST /v1/messaging/sms-templates": managementSecurity,
      "GET /v1/messaging/sms-templates/{messageType}": managementSecurity,
      "GET /v1/messaging/scheduled-emails": managementSecurity,
      "POST /v1/messaging/scheduled-emails": managementSecurity,
      "GET /v1/messaging/scheduled-emails/{id}": managementSecurity,
      "DELETE /v1/messaging/scheduled-emails/{id}": managementSecurity,
      "GET /v1/messaging/participant-mail-types": managementSecurity,
      "GET /v1/user-management/app-roles": managementSecurity,
      "DELETE /v1/user-management/app-roles/delete/{appName}": managementSecurity,
      "GET /v1/user-management/app-roles/templates": managementSecurity,
      "POST /v1/user-management/app-roles/templates": managementSecurity,
      "DELETE /v1/user-management/app-roles/templates/delete/{appRoleTemplateID}": managementSecurity,
      "DELETE /v1/user-management/app-roles/templates/delete-for-app/{appName}": managementSecurity,
      "GET /v1/user-management/app-roles/templates/{appRoleTemplateID}": managementSecurity,
      "PUT /v1/user-management/app-roles/templates/{appRoleTemplateID}": managementSecurity,
      "POST /v1/user-management/participant-users/request-deletion": managementSecurity,
      "GET /v1/user-management/management-users": managementSecurity,
      "GET /v1/user-management/management-users/{userID}": managementSecurity,
      "DELETE /v1/user-management/management-users/{userID}": managementSecurity,
      "GET /v1/user-management/management-users/{userID}/permissions": managementSecurity,
      "POST /v1/user-management/management-users/{userID}/permissions": managementSecurity,
      "DELETE /v1/user-management/management-users/{userID}/permissions/{permissionID}": managementSecurity,
      "PUT /v1/user-management/management-users/{userID}/permissions/{permissionID}/limiter": managementSecurity,
      "GET /v1/user-management/management-users/{userID}/app-roles": managementSecurity,
      "POST /v1/user-management/management-users/{userID}/app-roles/{appRoleTemplateID}": managementSecurity,
      "DELETE /v1/user-management/management-users/{userID}/app-roles/{appRoleID}": managementSecurity,
      "GET /v1/user-management/service-accounts": managementSecurity,
      "POST /v1/user-management/service-accounts": managementSecurity,
      "GET /v1/user-management/service-accounts/{serviceAccountID}": managementSecurity,
      "PUT /v1/user-management/service-accounts/{serviceAccountID}": managementSecurity,
      "DELETE /v1/user-management/service-accounts/{serviceAccountID}": managementSecurity,
      "GET /v1/user-management/service-accounts/{serviceAccountID}/api-keys": managementSecurity,
      "POST /v1/user-management/service-accounts/{serviceAccountID}/api-keys": managementSecurity,
      "DELETE /v1/user-management/service-accounts/{serviceAccountID}/api-keys/{apiKeyID}": managementSecurity,
      "GET /v1/user-management/service-accounts/{serviceAccountID}/permissions": managementSecurity,
      "POST /v1/user-management/service-accounts/{serviceAccountID}/permissions": managementSecurity,
      "DELETE /v1/user-management/service-accounts/{serviceAccountID}/permissions/{permissionID}": managementSecurity,
      "PUT /v1/user-management/service-accounts/{serviceAccountID}/permissions/{permissionID}/limiter":
        managementSecurity,
    });
    const submit = doc.paths["/v1/studies/{studyKey}/participants/{participantID}/responses"].post as {
      parameters: { name: string; in: string }[];
    };
    expect(submit.parameters.map((p) => `${p.in}:${p.in === "header" ? p.name.toLowerCase() : p.name}`)).toEqual([
      "path:studyKey",
      "path:participantID",
      "header:idempotency-key",
    ]);
  });

  it("answers 401 without a token on every authenticated operation", async () => {
    for (const operation of [...management, ...participantAccounts, ...participant]) {
      const res = await request(operation);
      expect(res.status, operation).toBe(401);
      expect(await res.json(), operation).toEqual({ error: "missing Authorization header" });
    }
    // renewal reads its bearer itself (an expired access token is what it renews)
    const renew = await postJson(t, "/v1/auth/token/renew", { refreshToken: "r" });
    expect(renew.status).toBe(401);
    expect(await renew.json()).toEqual({ error: "Authorization header must be 'Bearer <access token>'" });
  });

  it("keeps each kind of token to its own routers", async () => {
    const researcher = await managementToken(t, "root", true);
    for (const operation of participant) expect((await request(operation, researcher)).status, operation).toBe(401);
    expect((await postJson(t, "/v1/auth/token/renew", { refreshToken: "r" }, researcher)).status).toBe(401);
    const { token } = await participantUser(t);
    for (const operation of [...management, ...participantAccounts]) {
      expect((await request(operation, token)).status, operation).toBe(401);
    }
  });

  it("keeps the participant accounts to admins", async () => {
    const { token } = await researcher(t, "study-a", "*");
    for (const operation of participantAccounts) {
      const res = await request(operation, token);
      expect(res.status, operation).toBe(403);
      expect(await res.json(), operation).toEqual({ error: "managing participant accounts needs an admin token" });
    }
  });

  it("covers unknown paths below an authenticated prefix with its auth, as before: 401, then a JSON 404", async () => {
    for (const path of [
      "/v1/studies/study-a/nothing",
      "/v1/study-service/events/study-a/nothing",
      "/v1/study-service/participant/nothing",
      "/v1/study-service/participant-data/study-a/nothing",
      "/v1/user/nothing",
      "/v1/participant-users/u1/nothing",
    ]) {
      expect((await t.app.request(path)).status, path).toBe(401);
    }
    const researcher = await managementToken(t, "root", true);
    const res = await t.app.request("/v1/studies/study-a/nothing", {
      headers: { Authorization: `Bearer ${researcher}` },
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "no route for GET /v1/studies/study-a/nothing" });
  });

  it("leaves the public routes public", async () => {
    const headers = { "X-Forwarded-For": "192.0.2.44" };
    for (const path of [
      "/v1/study-service/temp-participant/register",
      "/v1/study-service/temp-participant/submit-response",
      "/v1/password-reset/initiate",
      "/v1/password-reset/get-infos",
      "/v1/password-reset/reset",
      "/v1/auth/signup",
      "/v1/auth/login",
      "/v1/auth/verify-email",
      "/v1/auth/temptoken-info",
      "/v1/auth/login-with-temptoken",
      "/v1/unsubscribe-newsletter",
    ]) {
      const res = await postJson(t, path, {}, undefined, "POST", headers);
      expect(res.status, path).toBe(400);
    }
    for (const path of [
      "/healthz",
      "/readyz",
      "/openapi.json",
      "/docs",
      "/reset-password",
      "/metrics",
      "/console",
      "/v1/study-service/studies",
      "/v1/study-service/studies/study-a",
      "/v1/study-service/studies/study-a/variables",
    ]) {
      expect((await t.app.request(path)).status, path).toBe(200);
    }
    expect((await t.app.request("/v1/study-service/temp-participant/survey")).status).toBe(400);
    expect((await t.app.request("/v1/study-service/temp-participant/surveys", { headers })).status).toBe(400);
    for (const path of [
      "/v1/study-service/studies/study-a/code-lists/has-code?listKey=l&code=c",
      "/v1/study-service/studies/study-a/code-lists/available-count?listKey=l",
    ]) {
      expect((await t.app.request(path, { headers })).status, path).toBe(200);
    }
    for (const path of ["/v1/password-reset/other", "/v1/auth/other"]) {
      const unknown = await t.app.request(path, { method: "POST" });
      expect(unknown.status, path).toBe(404);
      expect(await unknown.json()).toEqual({ error: `no route for POST ${path}` });
    }
  });
});
