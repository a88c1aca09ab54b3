// @ts-check
// Links between the console's pages, which live in the address's fragment (#/studies/…).
import { h } from "./dom.js";

/**
 * The fragment of a study's page; the key is one encoded segment, whatever it holds.
 * @param {string} studyKey
 * @param {string} [page]
 */
export function studyHref(studyKey, page = "") {
  return `#/studies/${encodeURIComponent(studyKey)}${page ? `/${page}` : ""}`;
}

/**
 * @param {string} studyKey
 * @param {string} page
 * @param {string} text
 */
export function studyLink(studyKey, page, text) {
  return h("a", { href: studyHref(studyKey, page) }, text);
}
