import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintManagementToken } from "@studyflow/domain/access";
import { createTestApp, type TestApp } from "@studyflow/api/testing";
import { openConsole, signInToConsole, startConsoleBrowser, type ConsoleBrowser } from "./browser";

/**
 * The console's Participant mails page in Chromium against the real API: every CASE participant
 * message type with whether the instance has a global template of it (saved here through
 * case-admin's route) and in which languages; a token without the messaging permission reads
 * the refusal.
 */

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");

describe("the console's Participant mails page", () => {
  let t: TestApp;
  let ui: ConsoleBrowser;
  let base: string;
  let page: Page;
  let adminToken: string;
  let researcherToken: string;

  const cell = (messageType: string, column: "template" | "languages") =>
    page.locator(`#mail-types tr[data-type="${messageType}"] td.${column}`);

  beforeAll(async () => {
    t = await createTestApp();
    const secret = t.config.MANAGEMENT_JWT_SECRET;
    adminToken = await mintManagementToken({ now: Date.now(), subject: "operator", isAdmin: true, secret });
    researcherToken = await mintManagementToken({ now: Date.now(), subject: "ada", isAdmin: false, secret });
    const saved = await t.app.request("/v1/messaging/email-templates/global-templates", {
      method: "POST",
      headers: { "content-type": "text/plain;charset=UTF-8", authorization: `Bearer ${adminToken}` },
      body: JSON.stringify({
        messageType: "verification-code",
        defaultLanguage: "nl",
        translations: [
          { lang: "nl", subject: "Je code", templateDef: b64("<p>{{.verificationCode}}</p>") },
          { lang: "en", subject: "Your code", templateDef: b64("<p>{{.verificationCode}}</p>") },
        ],
      }),
    });
    expect(saved.status).toBe(200);
    ui = await startConsoleBrowser(t.app.fetch);
    ({ base, page } = ui);
  });

  afterAll(async () => {
    await ui?.close();
    await t?.close();
  });

  it("lists each message type with its template and languages, reached from the nav", async () => {
    await signInToConsole(page, base, adminToken);
    await page.locator("#site-nav").getByRole("link", { name: "Participant mails" }).click();
    await page.locator("#page-title", { hasText: "Participant mails" }).waitFor();
    expect(page.url()).toMatch(/#\/mails$/);
    await page.locator("#mail-types").waitFor();

    expect(await cell("verification-code", "template").textContent()).toBe("yes");
    expect(await cell("verification-code", "languages").textContent()).toBe("nl (default), en");
    expect(await cell("registration", "template").textContent()).toBe("no: built-in mail");
    expect(await cell("registration", "languages").textContent()).toBe("");
    expect(await cell("invitation", "template").textContent()).toBe("no: built-in mail");
    expect(await page.locator('#mail-types tr[data-type="invitation"] td').first().textContent()).toBe(
      "never sent by studyflow",
    );
    const rows = await Promise.all(
      (await page.locator("#mail-types tbody tr").all()).map((row) => row.getAttribute("data-type")),
    );
    expect(rows).toEqual(
      expect.arrayContaining([
        "registration",
        "verify-email",
        "verification-code",
        "password-reset",
        "password-changed",
        "account-id-changed",
        "account-deleted",
        "invitation",
        "account-inactivity",
        "account-deleted-after-inactivity",
      ]),
    );
    await expect(page.locator(".notice").first().textContent()).resolves.toMatch(
      /mails studyflow sends have no template/,
    );
  });

  it("a token without the messaging permission reads the refusal", async () => {
    await signInToConsole(page, base, researcherToken);
    await openConsole(page, base, "#/mails");
    await page.locator("#page-title", { hasText: "Participant mails" }).waitFor();
    await expect(
      page
        .locator("main")
        .getByText(/^Refused: /)
        .textContent(),
    ).resolves.toMatch(/Refused/);
    expect(await page.locator("#mail-types").count()).toBe(0);
  });
});
