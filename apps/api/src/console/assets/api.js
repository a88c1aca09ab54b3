// @ts-check
// The console's calls to the JSON API (/v1/…), with the signed-in credential, and the task event
// stream read with fetch: EventSource cannot send the Authorization header (nor the CSRF token a
// provider session's calls carry).
import { cookieMode, credentialHeaders, loadCredential } from "./session.js";

/** @typedef {import("./session.js").Credential} Credential */

/** An answer of the API outside 2xx, with its `{"error"}` message. */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} message
   */
  constructor(status, message) {
    super(message);
    this.name = "ApiError";
    this.status = status;
  }
}

/** @type {(error: ApiError) => void} */
let onUnauthorized = () => {};

/**
 * What happens when the API answers 401 (expired or revoked token): the app signs out.
 * @param {(error: ApiError) => void} handler
 */
export function whenUnauthorized(handler) {
  onUnauthorized = handler;
}

/**
 * A path below /v1/studies/{studyKey}, the key encoded as one path segment.
 * @param {string} studyKey
 * @param {string} [rest]
 */
export function studyPath(studyKey, rest = "") {
  return `/v1/studies/${encodeURIComponent(studyKey)}${rest}`;
}

/**
 * A path below a study's run-actions task.
 * @param {string} studyKey
 * @param {string} taskId
 * @param {string} [rest]
 */
export function taskPath(studyKey, taskId, rest = "") {
  return studyPath(studyKey, `/run-actions/participants/task/${encodeURIComponent(taskId)}${rest}`);
}

/**
 * The headers and cookie mode of a call with `credential`, the signed-in one when absent.
 * @param {Credential} [credential]
 * @returns {{ headers: Record<string, string>, credentials: RequestCredentials }}
 */
function authOf(credential) {
  const used = credential ?? loadCredential();
  return { headers: used ? credentialHeaders(used) : {}, credentials: cookieMode(used) };
}

/**
 * @param {Response} response
 * @param {boolean} [signedIn] whether the call used the signed-in credential (a 401 then signs out)
 * @returns {Promise<ApiError>}
 */
async function errorOf(response, signedIn = true) {
  let message = `${response.status} ${response.statusText}`.trim();
  try {
    const body = /** @type {unknown} */ (await response.json());
    const { error } = /** @type {{ error?: unknown }} */ (body);
    if (typeof error === "string") message = error;
  } catch {
    // not the API's JSON: keep the status line
  }
  const error = new ApiError(response.status, message);
  if (response.status === 401 && signedIn) onUnauthorized(error);
  return error;
}

/**
 * One JSON call; resolves with the parsed body, rejects with ApiError. Without `credential`, it
 * is made with the signed-in one.
 * @param {string} method
 * @param {string} path
 * @param {{ body?: unknown, signal?: AbortSignal, credential?: Credential }} [options]
 * @returns {Promise<unknown>}
 */
export async function call(method, path, options = {}) {
  const auth = authOf(options.credential);
  /** @type {Record<string, string>} */
  const headers = { Accept: "application/json", ...auth.headers };
  /** @type {RequestInit} */
  const init = { method, headers, cache: "no-store", credentials: auth.credentials };
  if (options.body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(options.body);
  }
  if (options.signal) init.signal = options.signal;
  const response = await fetch(path, init);
  if (!response.ok) throw await errorOf(response, options.credential === undefined);
  const body = /** @type {unknown} */ (await response.json());
  return body;
}

/**
 * @param {string} path
 * @param {AbortSignal} [signal]
 */
export function get(path, signal) {
  return call("GET", path, signal ? { signal } : {});
}

/**
 * Reads a task's event stream (Server-Sent Events) until the server ends it; `onTask` sees each
 * `task` event's task. Resolves when the stream ends, rejects with ApiError or a network error.
 * @param {string} path
 * @param {(task: unknown) => void} onTask
 * @param {AbortSignal} signal
 */
export async function readTaskEvents(path, onTask, signal) {
  const auth = authOf();
  const response = await fetch(path, {
    headers: { Accept: "text/event-stream", ...auth.headers },
    cache: "no-store",
    credentials: auth.credentials,
    signal,
  });
  if (!response.ok) throw await errorOf(response);
  if (!response.body) throw new ApiError(response.status, "the event stream has no body");
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    // Events end with a blank line; a partial one waits for the next chunk.
    for (let end = buffer.search(/\r?\n\r?\n/); end !== -1; end = buffer.search(/\r?\n\r?\n/)) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, "");
      const event = parseFrame(frame);
      if (event.name === "task" && event.data !== "") {
        const parsed = /** @type {unknown} */ (JSON.parse(event.data));
        onTask(/** @type {{ task?: unknown }} */ (parsed).task);
      }
    }
  }
}

/**
 * One Server-Sent Event: its name and its data lines joined.
 * @param {string} frame
 */
function parseFrame(frame) {
  let name = "message";
  /** @type {string[]} */
  const data = [];
  for (const line of frame.split(/\r?\n/)) {
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") name = value;
    else if (field === "data") data.push(value);
  }
  return { name, data: data.join("\n") };
}

/**
 * A file the API sent as an attachment, read whole into the page's memory.
 * @typedef {object} DownloadedFile
 * @property {Blob} blob
 * @property {string} fileName
 */

/**
 * Fetches a file with the signed-in credential (a plain link could not send the Authorization
 * or X-CSRF-Token header), named as the API's Content-Disposition names it, else `fallbackName`.
 * @param {string} path
 * @param {string} fallbackName
 * @param {AbortSignal} [signal]
 * @returns {Promise<DownloadedFile>}
 */
export async function fetchFile(path, fallbackName, signal) {
  const auth = authOf();
  /** @type {RequestInit} */
  const init = { headers: { Accept: "*/*", ...auth.headers }, cache: "no-store", credentials: auth.credentials };
  if (signal) init.signal = signal;
  const response = await fetch(path, init);
  if (!response.ok) throw await errorOf(response);
  const disposition = response.headers.get("Content-Disposition") ?? "";
  const named = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(disposition)?.[1];
  let fileName = fallbackName;
  if (named) {
    try {
      fileName = decodeURIComponent(named.trim());
    } catch {
      fileName = named.trim();
    }
  }
  return { blob: await response.blob(), fileName };
}

/**
 * Hands a file to the browser's downloads: a link to an object URL, clicked, then released.
 * @param {DownloadedFile} file
 */
export function saveFile(file) {
  const url = URL.createObjectURL(file.blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = file.fileName;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // The download has taken the bytes by the time the click's task ends; a minute is generous.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
