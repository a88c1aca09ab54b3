import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { users } from "@studyflow/db";
import {
  PASSWORD_MIN_CHARACTERS,
  PASSWORD_RULE_DESCRIPTION,
  hashPassword,
  initiatePasswordReset,
  verifyPassword,
} from "@studyflow/domain/participant-accounts";
import { createTestApp, type TestApp } from "@studyflow/api/testing";
import { startConsoleBrowser, type ConsoleBrowser } from "./browser";

/**
 * The page the password-reset e-mail links to, in Chromium: it states the password rule, shows
 * the API's refusal of a password the rule excludes, sets a good one, runs under its own strict
 * policy without a violation, and refuses to be shown in a frame of another site's page.
 */

describe("the /reset-password page in a browser", () => {
  let t: TestApp;
  let ui: ConsoleBrowser;
  let framer: ReturnType<typeof serve>;
  let framerBase: string;

  beforeAll(async () => {
    t = await createTestApp();
    ui = await startConsoleBrowser(t.app.fetch);
    // Another site (another port is another origin) that puts the page, and a page that allows
    // it, in frames.
    const site = new Hono()
      .get("/framable", (c) => c.html('<form id="reset"></form>'))
      .get("/", (c) =>
        c.html(
          `<iframe name="control" src="/framable"></iframe>` +
            `<iframe name="target" src="${ui.base}/reset-password?token=abc"></iframe>`,
        ),
      );
    framer = serve({ fetch: site.fetch, port: 0, hostname: "127.0.0.1" });
    await new Promise<void>((resolve) => framer.once("listening", () => resolve()));
    framerBase = `http://127.0.0.1:${(framer.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await ui?.close();
    await new Promise<void>((resolve) => (framer ? framer.close(() => resolve()) : resolve()));
    await t?.close();
  });

  it("states the rule, shows the API's refusal, then sets a password the rule allows", async () => {
    const email = `reset-${randomBytes(4).toString("hex")}@example.org`;
    const [user] = await t.database.db
      .insert(users)
      .values({ email, passwordHash: await hashPassword("Old-harbour-lights-1"), preferredLanguage: "en" })
      .returning();
    const issued = await initiatePasswordReset(t.database.db, {
      email,
      now: new Date(),
      ttlSeconds: t.config.RESET_TOKEN_TTL_SECONDS,
      resetUrl: t.config.RESET_PASSWORD_URL,
    });
    const { page } = ui;
    await page.goto(`${ui.base}/reset-password?token=${encodeURIComponent(issued!.token)}`);
    await expect(page.locator("#rule").textContent()).resolves.toBe(PASSWORD_RULE_DESCRIPTION);

    // long enough for the form, refused by the API: the page shows the API's reason
    await page.locator("#password").fill("12345678".slice(0, PASSWORD_MIN_CHARACTERS));
    await page.keyboard.press("Enter");
    await page.locator("#outcome", { hasText: /^password / }).waitFor();
    expect(await verifyPassword(user!.passwordHash, "Old-harbour-lights-1")).toBe(true);

    // words in lower case, no digit or symbol: no composition rule
    await page.locator("#password").fill("lantern harbour meadow");
    await page.keyboard.press("Enter");
    await page.locator("#outcome", { hasText: "Your password has been changed." }).waitFor();
    const [after] = await t.database.db.select().from(users).where(eq(users.id, user!.id));
    expect(await verifyPassword(after!.passwordHash, "lantern harbour meadow")).toBe(true);
    expect(ui.policyViolations).toEqual([]);
  });

  it("is not shown in another site's frame", async () => {
    const { page } = ui;
    await page.goto(framerBase, { waitUntil: "load" });
    // Reached through the iframe elements: a frame the browser refused to fill shows its error
    // page, which may have lost the frame's name.
    const frameOf = async (name: string) =>
      (await page.locator(`iframe[name="${name}"]`).elementHandle())?.contentFrame();
    const control = await frameOf("control");
    // the same page of the other site is shown: frames work there
    expect(await control!.locator("#reset").count()).toBe(1);
    // the refusal is reported by the browser, which may come after the load event
    await expect
      .poll(() => ui.policyViolations.some((message) => /frame-ancestors/.test(message)), { timeout: 10_000 })
      .toBe(true);
    const target = await frameOf("target");
    expect(target ? await target.locator("#reset, #password").count() : 0).toBe(0);
  });
});
