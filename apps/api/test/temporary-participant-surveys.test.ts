import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertParticipant, managementToken, num, onEvent, call, setupStudy, str } from "./fixtures";
import { caseResponse, caseSurvey, uploadSurvey } from "./survey-fixtures";
import { createTestApp, type TestApp } from "./test-app";

const BASE = "/v1/study-service/temp-participant";

/** The anonymous report flow: ENTER assigns the report, SUBMIT assigns a follow-up instead. */
const rules = [
  onEvent("ENTER", call("ADD_NEW_SURVEY", str("report"), num(0), num(0), str("normal"))),
  onEvent(
    "SUBMIT",
    call("REMOVE_ALL_SURVEYS"),
    call("ADD_NEW_SURVEY", str("followup"), num(1_900_000_000), num(1_900_086_400), str("prio")),
  ),
];

let addressCounter = 0;
function freshAddress(): string {
  addressCounter += 1;
  return `203.0.${100 + Math.floor(addressCounter / 250)}.${addressCounter % 250}`;
}

describe("GET /v1/study-service/temp-participant/surveys (CASE)", () => {
  let t: TestApp;
  let reportVersion: string;

  const send = (method: string, path: string, body?: unknown, address = freshAddress()) =>
    t.app.request(`${BASE}${path}`, {
      method,
      headers: { "content-type": "text/plain;charset=UTF-8", "x-forwarded-for": `10.0.0.1, ${address}` },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const surveys = (params: Record<string, string>, address?: string) =>
    send("GET", `/surveys?${new URLSearchParams(params).toString()}`, undefined, address);

  async function register(): Promise<string> {
    const res = await send("POST", "/register", { studyKey: "study-t", instanceID: t.config.INSTANCE_ID });
    expect(res.status).toBe(200);
    return ((await res.json()) as { participant: { participantId: string } }).participant.participantId;
  }

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "study-t", rules });
    await setupStudy(t, { key: "study-off", status: "inactive" });
    const admin = await managementToken(t, "admin", true);
    reportVersion = await uploadSurvey(
      t,
      "study-t",
      admin,
      caseSurvey("report", { availableFor: "temporary_participants" }),
    );
    await uploadSurvey(t, "study-t", admin, caseSurvey("followup", { availableFor: "temporary_participants" }));
  });
  afterAll(async () => {
    await t.close();
  });

  it("answers the temporary participant's assigned surveys with their infos, as the signed-in route does", async () => {
    const pid = await register();
    const res = await surveys({ instanceID: t.config.INSTANCE_ID, studyKey: "study-t", pid });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { surveys: unknown[]; surveyInfos: Record<string, unknown>[] };
    expect(body.surveys).toEqual([
      { studyKey: "study-t", surveyKey: "report", validFrom: 0, validUntil: 0, category: "normal", profileID: "" },
    ]);
    expect(body.surveyInfos).toHaveLength(1);
    expect(body.surveyInfos[0]).toMatchObject({ surveyKey: "report", studyKey: "study-t", versionID: reportVersion });
    expect(body.surveyInfos[0]!.name).toEqual(expect.arrayContaining([expect.objectContaining({ code: "en" })]));

    const submitted = await send("POST", "/submit-response", {
      studyKey: "study-t",
      instanceID: t.config.INSTANCE_ID,
      pid,
      response: caseResponse("report", reportVersion),
    });
    expect(submitted.status).toBe(200);
    const after = (await (await surveys({ studyKey: "study-t", pid })).json()) as {
      surveys: { surveyKey: string; validFrom: number; validUntil: number; category: string }[];
      surveyInfos: { surveyKey: string }[];
    };
    expect(after.surveys).toEqual([
      {
        studyKey: "study-t",
        surveyKey: "followup",
        validFrom: 1_900_000_000,
        validUntil: 1_900_086_400,
        category: "prio",
        profileID: "",
      },
    ]);
    expect(after.surveyInfos.map((info) => info.surveyKey)).toEqual(["followup"]);
  });

  it("refuses a missing studyKey or pid and another instance with 400", async () => {
    const pid = await register();
    const cases: Record<string, string>[] = [
      { studyKey: "study-t" },
      { pid },
      { studyKey: "study-t", pid: "" },
      { studyKey: "study-t", pid, instanceID: "elsewhere" },
      { studyKey: "a b", pid },
    ];
    for (const params of cases) {
      const res = await surveys(params);
      expect(res.status, JSON.stringify(params)).toBe(400);
      expect(await res.json()).toHaveProperty("error");
    }
  });

  it("answers 404 for an unknown study or participant and for a participant that is not temporary, 409 for an inactive study", async () => {
    const pid = await register();
    const unknownStudy = await surveys({ studyKey: "no-such-study", pid });
    expect(unknownStudy.status).toBe(404);
    const unknownPid = await surveys({ studyKey: "study-t", pid: "f".repeat(64) });
    expect(unknownPid.status).toBe(404);
    expect(await unknownPid.json()).toHaveProperty("error");
    // a signed-in participant's id is no temporary participant's credential
    const active = await insertParticipant(t.database.db, {
      studyKey: "study-t",
      participantId: "a".repeat(64),
      assignedSurveys: [{ surveyKey: "report", validFrom: 0, validUntil: 0, category: "normal" }],
    });
    const notTemporary = await surveys({ studyKey: "study-t", pid: active.participantId });
    expect(notTemporary.status).toBe(404);
    expect(JSON.stringify(await notTemporary.json())).not.toContain("report");
    const inactive = await surveys({ studyKey: "study-off", pid });
    expect(inactive.status).toBe(409);
  });

  it("counts unknown ids per address: after 20 misses the address is refused with 429", async () => {
    const address = freshAddress();
    for (let i = 0; i < 20; i += 1) {
      const res = await surveys({ studyKey: "study-t", pid: `guess-${i}` }, address);
      expect(res.status).toBe(404);
    }
    const pid = await register();
    const refused = await surveys({ studyKey: "study-t", pid }, address);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect((await surveys({ studyKey: "study-t", pid })).status).toBe(200);
  });
});
