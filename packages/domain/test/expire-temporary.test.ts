import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { confidentialResponses, participants, surveyResponses } from "@studyflow/db";
import { confidentialIdOf, expireTemporaryParticipants } from "@studyflow/domain/participants";
import { createStudy } from "@studyflow/domain/study-setup";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";

describe("expireTemporaryParticipants", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  it("removes temporary participants past the cutoff with their confidential responses, keeping the rest", async () => {
    const study = await createStudy(database.db, { key: "s" });
    const rows = [
      { participantId: "old-temp", studyStatus: "temporary", enteredAt: 1_000 },
      { participantId: "new-temp", studyStatus: "temporary", enteredAt: 5_000 },
      { participantId: "old-active", studyStatus: "active", enteredAt: 1_000 },
    ];
    await database.db
      .insert(participants)
      .values(rows.map((row) => ({ ...row, studyKey: "s", modifiedAt: row.enteredAt })));
    for (const participantId of ["old-temp", "new-temp"]) {
      await database.db.insert(confidentialResponses).values({
        studyKey: "s",
        confidentialId: confidentialIdOf(study.secret, participantId),
        key: "email",
      });
    }
    await database.db
      .insert(surveyResponses)
      .values({ studyKey: "s", participantId: "old-temp", key: "intake", arrivedAt: 1_100 });

    expect(await expireTemporaryParticipants(database.db, 2_000)).toBe(1);
    const left = await database.db
      .select({ id: participants.participantId })
      .from(participants)
      .orderBy(participants.participantId);
    expect(left.map((row) => row.id)).toEqual(["new-temp", "old-active"]);
    const confidential = await database.db.select().from(confidentialResponses);
    expect(confidential.map((row) => row.confidentialId)).toEqual([confidentialIdOf(study.secret, "new-temp")]);
    expect(
      await database.db.select().from(surveyResponses).where(eq(surveyResponses.participantId, "old-temp")),
    ).toHaveLength(1);
    expect(await expireTemporaryParticipants(database.db, 2_000)).toBe(0);
  });
});
