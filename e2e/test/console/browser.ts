// Debian's Chromium driven by playwright-core, for the console's browser tests: headless, and
// with the background traffic a fresh profile starts (updates, sync, safe browsing, metrics)
// switched off, so a test run talks to nothing but the API under test.
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";

/** Where `.ci/run` installs it (apt-get install chromium). */
export const CHROMIUM = "/usr/bin/chromium";

/** Fresh screenshots of every console page, ignored by git; README's copy is docs/console-studies.png. */
export const SCREENSHOT_DIR = fileURLToPath(new URL("../../screenshots/", import.meta.url));

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
