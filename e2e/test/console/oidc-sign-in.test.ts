import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { eq } from "drizzle-orm";
import Provider from "oidc-provider";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { managementSessions } from "@studyflow/db";
import { systemClock } from "@studyflow/domain/foundation";
import { endManagementSession, upsertManagementUser } from "@studyflow/domain/management-users";
import { updateStudy } from "@studyflow/domain/study-config";
import { createStudy, grantPermission } from "@studyflow/domain/study-setup";
import { createTestApp, type TestApp } from "@studyflow/api/testing";
import { screenshot, startConsoleBrowser, type ConsoleBrowser } from "./browser";

/**
 * The console's sign-in at the organisation's OpenID provider, the whole redirect flow in Chromium:
 * a real provider (oidc-provider, a certified implementation) on 127.0.0.1 with the console
 * registered as a public client (PKCE required, no secret) and its development login and consent
 * pages; the API on a port of its own. The person sees only the study they were granted, and
 * signing out ends the session row and removes the cookie.
 */

const CLIENT_ID = "studyflow-console";
const PROVIDER_NAME = "Example ID";
const GRANTED = "flu-cohort";
const NOT_GRANTED = "covid-cohort";

interface RunningProvider {
  issuer: string;
  server: Server;
}

async function startProvider(redirectUri: string): Promise<RunningProvider> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        token_endpoint_auth_method: "none",
        redirect_uris: [redirectUri],
        grant_types: ["authorization_code"],
        response_types: ["code"],
      },
    ],
    // any login name signs in as that account (the development login does not check passwords)
    findAccount: (_ctx, id) => ({
      accountId: id,
      claims: () => ({ sub: id, email: `${id}@example.org`, email_verified: true, name: "Ada Lovelace" }),
    }),
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    cookies: { keys: ["console-oidc-e2e-cookie-key-0123456789"] },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 3600, IdToken: 3600 },
  });
  server.on("request", provider.callback());
  return { issuer, server };
}

describe("the console signs in at the organisation's OpenID provider (Chromium)", () => {
  let ui: ConsoleBrowser;
  let provider: RunningProvider;
  let t: TestApp;
  let page: Page;
  let userId: string;

  const cookieNames = async () => (await ui.context.cookies(ui.base)).map((cookie) => cookie.name).sort();

  /**
   * From the sign-in page through the provider's pages back to the console: its login form (as
   * "ada") and its consent page when it shows them (a second sign-in finds both done).
   */
  const signInAtProvider = async () => {
    await page.locator("#sign-in-provider").click();
    for (let step = 0; step < 4; step++) {
      await page.waitForURL((url) => url.origin === provider.issuer || url.hash.startsWith("#/"));
      if (new URL(page.url()).origin === ui.base) break;
      const login = page.locator('input[name="login"]');
      await page.locator('button[type="submit"]').waitFor();
      if ((await login.count()) > 0) {
        await login.fill("ada");
        await page.locator('input[name="password"]').fill("any password");
      }
      await page.locator('button[type="submit"]').click();
      await page.waitForLoadState();
    }
    await page.waitForURL(`${ui.base}/console#/studies`);
  };

  beforeAll(async () => {
    // The API's address first (the provider and the API's settings name its callback), then the app behind it.
    const served: { app?: TestApp["app"] } = {};
    ui = await startConsoleBrowser((request) => {
      if (!served.app) return new Response("starting", { status: 503 });
      return served.app.fetch(request);
    });
    page = ui.page;
    const redirectUri = `${ui.base}/console/oidc/callback`;
    provider = await startProvider(redirectUri);
    t = await createTestApp({
      env: {
        CONSOLE_OIDC_ISSUER: provider.issuer,
        CONSOLE_OIDC_CLIENT_ID: CLIENT_ID,
        CONSOLE_OIDC_REDIRECT_URI: redirectUri,
        CONSOLE_OIDC_PROVIDER_NAME: PROVIDER_NAME,
      },
    });
    served.app = t.app;
    const db = t.database.db;
    await createStudy(db, { key: GRANTED });
    await updateStudy(db, GRANTED, { name: { en: "Flu cohort" } }, "seed", { clock: systemClock });
    await createStudy(db, { key: NOT_GRANTED });
    // The person's management user as the sign-in will find it (issuer, sub), given one study
    // beforehand, as an admin does for a colleague who has signed in before.
    const { user } = await upsertManagementUser(
      db,
      { provider: provider.issuer, sub: "ada", email: "", username: "", imageUrl: "", isAdmin: false },
      new Date(),
    );
    userId = user.id;
    await grantPermission(db, userId, GRANTED, "*");
    // Nothing leaves the machine: the provider's pages import a web font.
    await ui.context.route(
      (url) => url.hostname !== "127.0.0.1",
      (route) => route.abort(),
    );
  });
  afterAll(async () => {
    await ui?.close();
    await new Promise<void>((resolve) => (provider ? provider.server.close(() => resolve()) : resolve()));
    await t?.close();
  });

  it("offers the provider's sign-in above the token paste, which stays for operators", async () => {
    await page.goto(`${ui.base}/console#/studies`);
    const button = page.locator("#sign-in-provider");
    await button.waitFor();
    expect(await button.innerText()).toBe(`Sign in with ${PROVIDER_NAME}`);
    expect(await button.getAttribute("href")).toBe(`/console/oidc/login?return=${encodeURIComponent("#/studies")}`);
    expect(await page.locator("#credential").isVisible()).toBe(true);
    expect(await page.locator("#no-provider").count()).toBe(0);
    await screenshot(page, "sign-in-provider");
  });

  it("goes through the provider's login and consent and comes back signed in, seeing only the granted study", async () => {
    // the provider's development login page, then its consent page
    await page.locator("#sign-in-provider").click();
    await page.waitForURL((url) => url.origin === provider.issuer);
    await page.locator('input[name="login"]').fill("ada");
    await page.locator('input[name="password"]').fill("any password");
    await page.locator('button[type="submit"]').click();
    await page.locator('input[name="prompt"][value="consent"]').waitFor({ state: "attached" });
    await page.locator('button[type="submit"]').click();

    await page.waitForURL(`${ui.base}/console#/studies`);
    await page.locator(".study-card").first().waitFor();
    expect(await page.locator("#who").innerText()).toContain("Signed in as Ada Lovelace");
    const cards = page.locator(".study-card");
    expect(await cards.count()).toBe(1);
    expect(await cards.first().innerText()).toContain(GRANTED);
    expect(await page.locator("body").innerText()).not.toContain(NOT_GRANTED);
    await screenshot(page, "signed-in-provider");

    // the session cookie as the browser keeps it; the attempt's cookie is gone
    const cookies = await ui.context.cookies(ui.base);
    const session = cookies.find((cookie) => cookie.name === "__Host-studyflow_console");
    expect(session).toMatchObject({ httpOnly: true, secure: true, sameSite: "Strict", path: "/" });
    expect(cookies.map((cookie) => cookie.name)).not.toContain("__Secure-studyflow_console_oidc");
    const [row] = await t.database.db.select().from(managementSessions).where(eq(managementSessions.userId, userId));
    expect(row?.kind).toBe("console");
    expect(session!.value).not.toContain(row!.id);

    // the page's script cannot read the cookie, and a call by the cookie without the CSRF token is refused
    expect(await page.evaluate("document.cookie")).toBe("");
    expect(await page.evaluate("fetch('/v1/studies', { credentials: 'same-origin' }).then((r) => r.status)")).toBe(403);
    expect(ui.policyViolations).toEqual([]);
  });

  it("keeps the session across a reload and opens a study's pages with it", async () => {
    await page.goto(`${ui.base}/console#/studies/${GRANTED}/tasks`);
    await page.locator("#page-title").waitFor();
    expect(await page.locator("#who").innerText()).toContain("Ada Lovelace");
    expect(await page.locator("#page-title").innerText()).toContain("Tasks");
  });

  it("signs out: the sign-in page again, the session row ended, the cookie gone", async () => {
    expect(await cookieNames()).toContain("__Host-studyflow_console");
    await page.locator("#who button").click();
    await page.locator("#sign-in-provider").waitFor();
    expect(await page.locator("#page-title").innerText()).toBe("Sign in");
    expect(await cookieNames()).not.toContain("__Host-studyflow_console");
    const [row] = await t.database.db.select().from(managementSessions).where(eq(managementSessions.userId, userId));
    expect(row!.expiresAt.getTime()).toBeLessThanOrEqual(Date.now());
    // a reload stays signed out
    await page.reload();
    await page.locator("#sign-in-provider").waitFor();
    expect(await page.locator("#who").innerText()).toBe("");
    expect(ui.policyViolations).toEqual([]);
  });

  it("falls back to the sign-in page when the session has ended", async () => {
    await page.goto(`${ui.base}/console#/studies`);
    await page.locator("#sign-in-provider").waitFor();
    await signInAtProvider();
    await page.locator(".study-card").first().waitFor();
    // the session ends elsewhere (expired, or ended by an admin)
    const sessions = await t.database.db.select().from(managementSessions).where(eq(managementSessions.userId, userId));
    const open = sessions.filter((session) => session.expiresAt.getTime() > Date.now());
    expect(open).toHaveLength(1);
    expect(await endManagementSession(t.database.db, open[0]!.id, new Date())).toBe(true);
    await t.settle();
    // The next page the console opens meets the ended session. It is opened by its address, not by
    // its link: a panel of the study list still loading (counts, timers, rule failures) may meet the
    // ended session first, and that replaces the list, link and all, with the same sign-in page.
    await page.evaluate(`window.location.hash = ${JSON.stringify(`#/studies/${GRANTED}/tasks`)}`);
    await page.locator("#sign-in-provider").waitFor();
    expect(await page.locator("#page-title").innerText()).toBe("Sign in");
    expect(await page.locator("[role=alert]").innerText()).toBe("Signed out: session ended: sign in again.");
  });
});
