import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { gzip } from "node:zlib";

/**
 * The viewer of the API reference page: the self-contained browser build of the installed
 * @scalar/api-reference (one file, no lazily loaded chunks), served from here, so the page works in
 * a closed network: nothing it loads or calls lies outside this origin.
 */

/** `dist/index.js` of the installed package; its browser build and package.json sit beside it. */
const PACKAGE_ENTRY = fileURLToPath(import.meta.resolve("@scalar/api-reference"));
const VIEWER_FILE = path.join(path.dirname(PACKAGE_ENTRY), "browser", "standalone.js");
const PACKAGE_JSON = path.join(path.dirname(PACKAGE_ENTRY), "..", "package.json");

/** Below the page's own address, so one mount serves both. */
export const API_REFERENCE_ASSETS_PATH = "/docs/assets";

interface ViewerAsset {
  /** Carries the package version: a new version is a new address, so browsers may keep each for good. */
  name: string;
  body: Uint8Array<ArrayBuffer>;
  gzipped: Uint8Array<ArrayBuffer>;
}

let viewerName: Promise<string> | undefined;
let viewerAsset: Promise<ViewerAsset> | undefined;

export function nameOfViewer(): Promise<string> {
  viewerName ??= readFile(PACKAGE_JSON, "utf8").then((text) => {
    const { version } = JSON.parse(text) as { version: string };
    return `scalar-api-reference-${version}.js`;
  });
  return viewerName;
}

/**
 * Read and compressed on first use and kept: 4.3 MB, 1.3 MB gzipped (about 0.2 s of compression
 * once per process, off the event loop), which is what a browser on a slow network waits for.
 */
export function loadViewer(): Promise<ViewerAsset> {
  viewerAsset ??= Promise.all([nameOfViewer(), readFile(VIEWER_FILE)]).then(async ([name, body]) => ({
    name,
    body,
    gzipped: await promisify(gzip)(body),
  }));
  return viewerAsset;
}
