// Debian's Chromium driven by playwright-core, for the console's browser tests: headless, and
// with the background traffic a fresh profile starts (updates, sync, safe browsing, metrics)
// switched off, so a test run talks to nothing but the API under test.
import { existsSync } from "node:fs";
import { copyFile, mkdir } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { serve } from "@hono/node-server";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";

/** Where `.ci/run` installs it (apt-get install chromium). */
export const CHROMIUM = "/usr/bin/chromium";

/** Fresh screenshots of every console page, ignored by git. */
export const SCREENSHOT_DIR = fileURLToPath(new URL("../../screenshots/", import.meta.url));

/** The documentation's pictures of the console (README.md, docs/console.md, docs/data-out.md). */
export const DOCS_DIR = fileURLToPath(new URL("../../../docs/", import.meta.url));

/** Set to refresh docs/console-*.png from this run (every run refreshes e2e/screenshots/). */
export const UPDATE_DOCS_SCREENSHOTS = process.env.UPDATE_DOCS_SCREENSHOTS === "1";

const QUIET_FLAGS = [
  "--no-sandbox",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-default-apps",
  "--disable-sync",
  "--disable-extensions",
  "--disable-client-side-phishing-detection",
  "--disable-domain-reliability",
  "--metrics-recording-only",
  "--no-first-run",
  "--no-default-browser-check",
  "--no-pings",
  "--disable-breakpad",
  "--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication",
];

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: apt-get install -y --no-install-recommends chromium (as .ci/run does)`);
  }
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: QUIET_FLAGS });
}

/** Saves a full-page screenshot as e2e/screenshots/console-<name>.png. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `console-${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * A screenshot that the documentation shows: saved as screenshot() does and, with
 * UPDATE_DOCS_SCREENSHOTS=1, copied to docs/console-<name>.png. Only pages showing a realistic
 * study belong there, never the fixtures that check markup stays text.
 */
export async function documentedScreenshot(page: Page, name: string): Promise<string> {
  const file = await screenshot(page, name);
  if (UPDATE_DOCS_SCREENSHOTS) await copyFile(file, path.join(DOCS_DIR, `console-${name}.png`));
  return file;
}

/** Opens a console route (`#/…`) and waits for its page to render. */
export async function openConsole(page: Page, base: string, hash: string): Promise<void> {
  await page.goto(`${base}/console${hash}`);
  await page.locator("#page-title").waitFor();
}

/** Signs in to the console with a token, as a person pastes it, from a clean session. */
export async function signInToConsole(page: Page, base: string, token: string): Promise<void> {
  await page.goto(`${base}/console`);
  // a string: the test project has no DOM types
  await page.evaluate("sessionStorage.clear()");
  await page.reload();
  await page.locator("#credential").fill(token);
  await page.keyboard.press("Enter");
  await page.locator(".study-card, .notice").first().waitFor();
}

export interface ConsoleBrowser {
  /** The API's origin, e.g. http://127.0.0.1:40123. */
  base: string;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** Content Security Policy and Trusted Types violations the page reported on its console. */
  policyViolations: string[];
  /** Closes the browser, then the server. */
  close(): Promise<void>;
}

/**
 * The API served on a free local port and one Chromium page to drive its console, collecting
 * policy violations. A locator waits `timeoutMs` (well below a test's own timeout, so a missing
 * element fails with the locator's name).
 */
export async function startConsoleBrowser(
  fetch: Parameters<typeof serve>[0]["fetch"],
  options: { acceptDownloads?: boolean; timeoutMs?: number } = {},
): Promise<ConsoleBrowser> {
  const server = serve({ fetch, port: 0, hostname: "127.0.0.1" });
  const closeServer = () => new Promise<void>((resolve) => server.close(() => resolve()));
  try {
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const browser = await launchChromium();
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      ...(options.acceptDownloads ? { acceptDownloads: true } : {}),
    });
    const page = await context.newPage();
    page.setDefaultTimeout(options.timeoutMs ?? 10_000);
    const policyViolations: string[] = [];
    page.on("console", (message) => {
      if (/Content Security Policy|Trusted Type/i.test(message.text())) policyViolations.push(message.text());
    });
    const close = async () => {
      await browser.close();
      await closeServer();
    };
    return { base, browser, context, page, policyViolations, close };
  } catch (error) {
    await closeServer();
    throw error;
  }
}
