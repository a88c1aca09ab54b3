import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accountDeletions, participantSessions, participants, users } from "@studyflow/db";
import { mintManagementToken } from "@studyflow/domain/access";
import { enterStudy } from "@studyflow/domain/events";
import { createStudy, createUserWithProfiles, setStudyRules } from "@studyflow/domain/study-setup";
import { STRONG_PASSWORD, onEvent } from "@studyflow/testkit";
import { createTestApp, type TestApp } from "@studyflow/api/testing";
import { call, startWorkerBesideApi, str } from "@studyflow/worker/testing";
import { openConsole, screenshot, signInToConsole, startConsoleBrowser, type ConsoleBrowser } from "./browser";

/**
 * The console's Accounts page in Chromium against the real API and an in-process worker: an
 * admin finds an account by e-mail and sees its state, locks, unlocks and signs it out after a
 * confirmation step (cancel does nothing), deletes it (the typed address must match) and follows
 * the deletion until the worker is done; a non-admin token reads the refusal.
 */

const STUDY = "accounts-cohort";
const EMAIL = "kim.participant@example.org";

describe("the console's Accounts page", () => {
  let t: TestApp;
  let ui: ConsoleBrowser;
  let base: string;
  let worker: ReturnType<typeof startWorkerBesideApi>;
  let page: Page;
  let adminToken: string;
  let researcherToken: string;
  let userId: string;

  const open = (hash: string) => openConsole(page, base, hash);
  const find = async (email: string) => {
    await page.locator("#account-email").fill(email);
    await page.getByRole("button", { name: "Find", exact: true }).click();
  };
  const fact = (label: string) =>
    page.locator(".account dl.facts dt", { hasText: label }).locator("xpath=following-sibling::dd[1]");
  const account = async () => (await t.database.db.select().from(users).where(eq(users.id, userId)))[0];

  beforeAll(async () => {
    const resultDir = await mkdtemp(path.join(tmpdir(), "sf-console-accounts-"));
    t = await createTestApp({ env: { RESULT_DIR: resultDir } });
    const db = t.database.db;
    await createStudy(db, { key: STUDY });
    await setStudyRules(db, STUDY, [onEvent("LEAVE", call("UPDATE_FLAG", str("left"), str("yes")))], "seed");
    const created = await createUserWithProfiles(db, {
      now: new Date(),
      email: EMAIL,
      password: STRONG_PASSWORD,
      profiles: ["Kim", "Kim's child", "Kim's other child"],
    });
    userId = created.user.id;
    for (const profile of created.profiles) {
      await enterStudy(db, { studyKey: STUDY, userId, profile }, { clock: Date.now });
    }
    await db.insert(participantSessions).values({ userId, expiresAt: new Date(Date.now() + 86_400_000) });

    const secret = t.config.MANAGEMENT_JWT_SECRET;
    adminToken = await mintManagementToken({ now: Date.now(), subject: "operator", isAdmin: true, secret });
    researcherToken = await mintManagementToken({ now: Date.now(), subject: "ada", isAdmin: false, secret });

    worker = startWorkerBesideApi(t, resultDir);
    ui = await startConsoleBrowser(t.app.fetch);
    ({ base, page } = ui);
  });

  afterAll(async () => {
    await ui?.close();
    await worker?.stop();
    await t?.close();
  });

  it("finds an account by e-mail from the nav's Accounts page and shows its state", async () => {
    await signInToConsole(page, base, adminToken);
    await page.locator("#site-nav").getByRole("link", { name: "Accounts" }).click();
    await page.locator("#page-title", { hasText: "Participant accounts" }).waitFor();
    expect(page.url()).toMatch(/#\/accounts$/);

    await find("nobody@example.org");
    await page.getByText("No account has this address.").waitFor();

    await find(`  ${EMAIL.toUpperCase()} `);
    await page.locator("#account-heading", { hasText: EMAIL }).waitFor();
    expect(await fact("Account ID").innerText()).toBe(userId);
    expect(await fact("Profiles").innerText()).toBe("3");
    expect(await fact("Confirmed").innerText()).toBe("not yet");
    expect(await fact("Locked").innerText()).toBe("no");
    expect(await fact("Last sign-in").innerText()).toBe("never");
    expect(await fact("Deletion").innerText()).toBe("none");
    // nothing secret reaches the page
    expect(await page.locator(".account").innerText()).not.toMatch(/argon2|\$argon/);
  });

  it("locks and unlocks after a confirmation step; cancel changes nothing", async () => {
    await page.getByRole("button", { name: "Lock", exact: true }).click();
    await page.getByText(/^Lock kim\.participant@example\.org\? No sign-in/).waitFor();
    await page.getByRole("button", { name: "Cancel" }).click();
    expect(await page.locator(".confirmation").count()).toBe(0);
    expect((await account())?.lockedAt).toBeNull();

    await page.getByRole("button", { name: "Lock", exact: true }).click();
    await page.getByRole("button", { name: "Lock the account" }).click();
    await page.getByText("Locked: every session ended").waitFor();
    expect((await account())?.lockedAt).not.toBeNull();
    expect(await fact("Locked").innerText()).not.toBe("no");

    await page.getByRole("button", { name: "Unlock", exact: true }).click();
    await page.getByRole("button", { name: "Unlock the account" }).click();
    await page.getByText("Unlocked: the account can sign in again.").waitFor();
    expect((await account())?.lockedAt).toBeNull();
    expect(await fact("Locked").innerText()).toBe("no");
  });

  it("signs the account out everywhere", async () => {
    await t.database.db.insert(participantSessions).values({ userId, expiresAt: new Date(Date.now() + 86_400_000) });
    await page.getByRole("button", { name: "Sign out everywhere" }).click();
    await page.locator(".confirmation").getByRole("button", { name: "Sign out everywhere" }).click();
    await page.getByText(/Signed out everywhere: 1 open session\(s\) ended\./).waitFor();
    const sessions = await t.database.db
      .select()
      .from(participantSessions)
      .where(eq(participantSessions.userId, userId));
    expect(sessions.every((session) => session.revokedAt !== null)).toBe(true);
  });

  it("deletes it once the address is typed, and follows the deletion until the worker is done", async () => {
    await page.getByRole("button", { name: "Delete the account…" }).click();
    await page.locator("#confirm-email").fill("someone.else@example.org");
    await page.getByRole("button", { name: "Delete the account", exact: true }).click();
    await page.getByText("The address typed is not this account's; nothing was done.").waitFor();
    expect(await t.database.db.select().from(accountDeletions)).toHaveLength(0);

    await page.getByRole("button", { name: "Delete the account…" }).click();
    await page.locator("#confirm-email").fill(EMAIL);
    await page.getByRole("button", { name: "Delete the account", exact: true }).click();
    await page.getByText("Deletion queued").waitFor();
    const progress = page.locator(".task-progress[data-deletion-id] .progress-text");
    await progress.waitFor();
    await expect.poll(() => progress.innerText(), { timeout: 30_000 }).toMatch(/^done · 3 \/ 3 participants/);
    await page.getByText("The account is deleted: it no longer exists.").waitFor();
    expect(await fact("Deletion").innerText()).toMatch(/^done, requested /);
    expect(await page.locator("#deletion-progress").getAttribute("value")).toBe("1");
    await screenshot(page, "accounts");

    expect(await account()).toBeUndefined();
    const statuses = await t.database.db.select({ status: participants.studyStatus }).from(participants);
    expect(statuses.map((row) => row.status)).toEqual(["accountDeleted", "accountDeleted", "accountDeleted"]);
    const [deletion] = await t.database.db.select().from(accountDeletions);
    expect(deletion?.status).toBe("done");

    // found again: there is no such account any more
    await find(EMAIL);
    await page.getByText("No account has this address.").waitFor();
  });

  it("a non-admin token reads the refusal", async () => {
    await signInToConsole(page, base, researcherToken);
    await open("#/accounts");
    await find("nobody@example.org");
    const refusal = page.locator("#account-result [role=alert]");
    await refusal.waitFor();
    expect(await refusal.innerText()).toBe("Refused: managing participant accounts needs an admin token.");
    expect(ui.policyViolations).toEqual([]);
  });
});
