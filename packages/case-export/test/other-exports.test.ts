import { describe, expect, it } from "vitest";
import {
  confidentialResponseEntries,
  createConfidentialResponseFormatter,
  createParticipantFormatter,
  createReportFormatter,
  type ExportParticipant,
  type ExportReport,
} from "../src";
import { readCsv } from "./csv-reader";
import { answer, r, v } from "./survey-builders";

const participant: ExportParticipant = {
  id: "0b6a-uuid",
  participantId: "p-1",
  studyStatus: "active",
  enteredAt: 1700000000,
  modifiedAt: 1700000500,
  flags: { zeta: "1", alpha: "<x>" },
  linkingCodes: {},
  assignedSurveys: [{ surveyKey: "weekly", validFrom: 1700000000, validUntil: 1800000000, category: "prio" }],
  lastSubmissions: { weekly: 1700000400, intake: 1700000100 },
  messages: [{ id: "m1", type: "reminder", scheduledFor: 1700086400 }],
  hashedAccountId: null,
  isMainProfile: null,
};

describe("participant export", () => {
  it("writes CASE's Participant struct: field order, sorted maps, study key filled in", () => {
    const f = createParticipantFormatter({ studyKey: "flu" });
    const text = f.start() + f.format([participant], false).text + f.end();
    expect(f.contentType).toBe("application/json");
    expect(text).toBe(
      '{"participants": [{"id":"0b6a-uuid","participantId":"p-1","currentStudySession":"","modifiedAt":1700000500,' +
        '"enteredAt":1700000000,"studyStatus":"active","flags":{"alpha":"\\u003cx\\u003e","zeta":"1"},"linkingCodes":{},' +
        '"assignedSurveys":[{"studyKey":"flu","surveyKey":"weekly","validFrom":1700000000,"validUntil":1800000000,"category":"prio","profileID":""}],' +
        '"lastSubmissions":{"intake":1700000100,"weekly":1700000400},' +
        '"messages":[{"id":"m1","type":"reminder","scheduledFor":1700086400}]}]}',
    );
  });

  it("adds hashedAccountID and isMainProfile only when known; batches join with commas", () => {
    const tracked = { ...participant, participantId: "p-2", hashedAccountId: "h", isMainProfile: false };
    const f = createParticipantFormatter({ studyKey: "flu" });
    const one = f.format([participant, tracked], false).text;
    expect(f.format([participant], false).text + f.format([tracked], true).text).toBe(one);
    expect(one).toContain(',"hashedAccountID":"h","isMainProfile":false}');
    expect(one.match(/hashedAccountID/g)).toHaveLength(1);
    expect(JSON.parse(f.start() + one + f.end())).toMatchObject({ participants: [{}, { participantId: "p-2" }] });
  });
});

const report: ExportReport = {
  id: "r1",
  key: "fever",
  participantId: "p-1",
  responseId: "resp-1",
  timestamp: 1700000000,
  data: [
    { key: "onset", value: "1699913600", dtype: "date" },
    { key: "severity", value: "3", dtype: "int" },
    { key: "id", value: "dup" },
    { key: "note", value: "a, b" },
  ],
};

describe("report export", () => {
  it("JSON: CASE's Report struct, Go's zero time for modifiedAt, data left out when empty", () => {
    const f = createReportFormatter({ format: "json" });
    const empty: ExportReport = { ...report, id: "r2", responseId: null, data: [], modifiedAt: 1700000001.5 };
    const text = f.start() + f.format([report], false).text + f.format([empty], true).text + f.end();
    expect(text).toBe(
      '{"reports": [{"id":"r1","key":"fever","participantID":"p-1","responseID":"resp-1","timestamp":1700000000,' +
        '"modifiedAt":"0001-01-01T00:00:00Z","data":[{"key":"onset","value":"1699913600","dtype":"date"},' +
        '{"key":"severity","value":"3","dtype":"int"},{"key":"id","value":"dup"},{"key":"note","value":"a, b"}]},' +
        '{"id":"r2","key":"fever","participantID":"p-1","responseID":"","timestamp":1700000000,' +
        '"modifiedAt":"2023-11-14T22:13:21.5Z"}]}',
    );
  });

  it("CSV: reserved columns, then sorted data keys; dates as RFC 3339; reserved names prefixed", () => {
    const f = createReportFormatter({ format: "csv", dataKeys: ["severity", "onset", "id", "note", "onset"] });
    const text =
      f.start() +
      f.format([report, { ...report, id: "r3", data: [{ key: "onset", value: "soon", dtype: "date" }] }], false).text;
    expect(readCsv(text)).toEqual([
      ["id", "key", "participantID", "timestamp", "responseID", "data_id", "note", "onset", "severity"],
      ["r1", "fever", "p-1", "2023-11-14T22:13:20Z", "resp-1", "dup", "a, b", "2023-11-13T22:13:20Z", "3"],
      ["r3", "fever", "p-1", "2023-11-14T22:13:20Z", "resp-1", "", "", "soon", ""],
    ]);
    expect(text).toContain(',"a, b",');
  });

  it("CSV: counts a report whose data key was not announced, and still writes it", () => {
    const f = createReportFormatter({ format: "csv", dataKeys: ["onset"] });
    const out = f.format([report], false);
    expect(out).toMatchObject({ rows: 1, mismatches: 1 });
    expect(readCsv(f.start() + out.text)[1]).toEqual([
      "r1",
      "fever",
      "p-1",
      "2023-11-14T22:13:20Z",
      "resp-1",
      "2023-11-13T22:13:20Z",
    ]);
  });

  it("CSV: date values parse as Go's ParseFloat does", () => {
    const f = createReportFormatter({ format: "csv", dataKeys: ["d"] });
    const cell = (value: string) =>
      readCsv(f.start() + f.format([{ ...report, data: [{ key: "d", value, dtype: "date" }] }], false).text)[1]![5];
    expect(cell("1.7e9")).toBe("2023-11-14T22:13:20Z");
    expect(cell("86400.9")).toBe("1970-01-02T00:00:00Z");
    expect(cell("-86400")).toBe("1969-12-31T00:00:00Z");
    expect(cell("+0")).toBe("1970-01-01T00:00:00Z");
    expect(cell("0x10")).toBe("0x10");
    expect(cell(" 5")).toBe(" 5");
    expect(cell("")).toBe("");
    expect(cell("1e400")).toBe("1e400");
  });
});

const confidential = {
  id: "c1",
  participantId: "p-1",
  responses: [
    answer("intake.conf", [v("mail", "ann@example.org")]),
    answer("intake.addr", [r("contact", [v("street", "Main St 1"), v("city", "Utrecht")])]),
    answer("intake.none", null),
  ],
};

describe("confidential response export", () => {
  it("one entry per answered slot, keyed <item>-<path>", () => {
    expect(confidentialResponseEntries(confidential)).toEqual([
      { participantID: "p-1", entryID: "c1", responseKey: "intake.conf-rg.mail", value: "ann@example.org" },
      { participantID: "p-1", entryID: "c1", responseKey: "intake.addr-rg.contact.street", value: "Main St 1" },
      { participantID: "p-1", entryID: "c1", responseKey: "intake.addr-rg.contact.city", value: "Utrecht" },
    ]);
    expect(confidentialResponseEntries(confidential, ["intake.conf-rg.mail"])).toHaveLength(1);
  });

  it("CSV with CASE's header", () => {
    const f = createConfidentialResponseFormatter({ format: "csv" });
    const out = f.format([confidential], false);
    expect(out.rows).toBe(3);
    expect(f.start() + out.text).toBe(
      "participantID,entryID,responseKey,value\np-1,c1,intake.conf-rg.mail,ann@example.org\n" +
        "p-1,c1,intake.addr-rg.contact.street,Main St 1\np-1,c1,intake.addr-rg.contact.city,Utrecht\n",
    );
  });

  it("JSON indented as Go's encoder, also across batches, and [] when empty", () => {
    const f = createConfidentialResponseFormatter({ format: "json", keyFilter: ["intake.conf-rg.mail"] });
    const first = f.format([confidential], false);
    const second = f.format([{ ...confidential, id: "c2" }], first.rows > 0);
    expect(f.start() + first.text + second.text + f.end(true)).toBe(
      '[\n  {\n    "participantID": "p-1",\n    "entryID": "c1",\n    "responseKey": "intake.conf-rg.mail",\n    "value": "ann@example.org"\n  },' +
        '\n  {\n    "participantID": "p-1",\n    "entryID": "c2",\n    "responseKey": "intake.conf-rg.mail",\n    "value": "ann@example.org"\n  }\n]\n',
    );
    const none = f.format([{ ...confidential, responses: [] }], false);
    expect(none.rows).toBe(0);
    expect(f.start() + none.text + f.end(false)).toBe("[]\n");
  });
});
