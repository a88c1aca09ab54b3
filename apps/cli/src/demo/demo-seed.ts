import { eq } from "drizzle-orm";
import { permissions, studies, users, type DbHandle } from "@studyflow/db";
import { mintManagementToken, mintParticipantToken } from "@studyflow/domain/access";
import { Forbidden } from "@studyflow/domain/errors";
import { enterStudy } from "@studyflow/domain/events";
import { type ClockContext } from "@studyflow/domain/foundation";
import { participantIdsInStudy } from "@studyflow/domain/participants";
import {
  addSyntheticParticipants,
  createStudy,
  createUserWithProfiles,
  grantPermission,
  setStudyRules,
} from "@studyflow/domain/study-setup";
import type { CliConfig } from "../config";
import { demoRules } from "./demo-rules";

export const DEMO_STUDY = "demo-study";
export const DEMO_RESEARCHER = "demo-researcher";
export const DEMO_EMAIL = "pat@demo.studyflow.local";
export const DEMO_PASSWORD = "Demo-Password-2026!";

/** What the walkthrough needs, written by the seed (tokens are valid for a week). */
export interface DemoFile {
  studyKey: string;
  researcherToken: string;
  participantToken: string;
  userEmail: string;
  /** Profile 1 is in the study from the start; profile 2 claims a temporary participant. */
  profileIds: [string, string];
  /** Participant id of profile 1, for management calls on its behalf. */
  participantId: string;
}

const WEEK_SECONDS = 7 * 24 * 3600;

/**
 * The demo's data is public by design: its participant account's password is written in the
 * repository and its tokens go to a file and the log. A production database gets it only where
 * the operator declared the deployment a demo (docker-compose.demo.yml sets STUDYFLOW_DEMO=true);
 * development and test databases get it freely (`npm run demo:up`, `npm run demo`).
 */
export function assertDemoSeedAllowed(config: Pick<CliConfig, "NODE_ENV" | "STUDYFLOW_DEMO">): void {
  if (config.NODE_ENV !== "production" || config.STUDYFLOW_DEMO) return;
  throw new Forbidden(
    "the demo seed refuses to run with NODE_ENV=production: it would add a demo study, synthetic " +
      `participants and the participant account ${DEMO_EMAIL}, whose password is published in the ` +
      "studyflow repository. Nothing was written. The demo sets STUDYFLOW_DEMO=true " +
      "(docker compose -f docker-compose.yml -f docker-compose.demo.yml, docs/demo.md); never set it " +
      "where real data is kept.",
  );
}

/**
 * Creates the demo study (idempotent: a second run keeps the data and mints fresh tokens):
 * realistic rules, 10,000 participants, a researcher with the rights the walkthrough uses, and a
 * participant user with two profiles, the first of which has entered the study.
 */
export async function seedDemo(
  database: DbHandle,
  // The signing keys and the mode: the API's own config fits as well (the walkthrough test passes it).
  config: Pick<CliConfig, "NODE_ENV" | "STUDYFLOW_DEMO" | "MANAGEMENT_JWT_SECRET" | "PARTICIPANT_JWT_SECRET">,
  ctx: ClockContext,
  participantCount = 10_000,
): Promise<DemoFile> {
  // Before the first statement, so a refusal leaves the database as it was.
  assertDemoSeedAllowed(config);
  const db = database.db;
  const now = ctx.clock();
  const [existing] = await db.select().from(studies).where(eq(studies.key, DEMO_STUDY));
  if (!existing) {
    await createStudy(db, { key: DEMO_STUDY, status: "active" });
    await setStudyRules(db, DEMO_STUDY, demoRules, "demo-seed");
    await addSyntheticParticipants(db, {
      studyKey: DEMO_STUDY,
      count: participantCount,
      statuses: ["active", "active", "active", "active", "exited"],
      enteredAt: Math.floor(now / 1000),
      idPrefix: "demo-",
    });
  }
  for (const action of ["run-study-action", "edit-participant-data", "update-study-props"] as const) {
    await grantPermission(db, DEMO_RESEARCHER, DEMO_STUDY, action);
  }
  let [user] = await db.select().from(users).where(eq(users.email, DEMO_EMAIL));
  let profileIds: [string, string];
  if (!user) {
    const created = await createUserWithProfiles(db, {
      email: DEMO_EMAIL,
      password: DEMO_PASSWORD,
      profiles: ["Pat", "Pat's child"],
      now: new Date(now),
    });
    user = created.user;
    profileIds = [created.profiles[0]!.id, created.profiles[1]!.id];
    await enterStudy(
      db,
      { studyKey: DEMO_STUDY, userId: user.id, profile: { id: profileIds[0], mainProfile: true } },
      ctx,
    );
  } else {
    const profiles = await db.query.profiles.findMany({ where: (p, { eq: is }) => is(p.userId, user!.id) });
    const sorted = [...profiles].sort((a, b) => Number(b.mainProfile) - Number(a.mainProfile));
    profileIds = [sorted[0]!.id, sorted[1]!.id];
  }
  const [study] = await db.select().from(studies).where(eq(studies.key, DEMO_STUDY));
  const grants = await db.select().from(permissions).where(eq(permissions.subjectId, DEMO_RESEARCHER));
  if (!study || grants.length < 3) throw new Error("demo seed did not complete");
  return {
    studyKey: DEMO_STUDY,
    researcherToken: await mintManagementToken({
      subject: DEMO_RESEARCHER,
      isAdmin: false,
      secret: config.MANAGEMENT_JWT_SECRET,
      ttlSeconds: WEEK_SECONDS,
      now,
    }),
    participantToken: await mintParticipantToken({
      userId: user.id,
      tokenVersion: user.tokenVersion,
      secret: config.PARTICIPANT_JWT_SECRET,
      ttlSeconds: WEEK_SECONDS,
      now,
    }),
    userEmail: DEMO_EMAIL,
    profileIds,
    participantId: participantIdsInStudy(study, profileIds[0]).participantId,
  };
}
