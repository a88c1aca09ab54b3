// @ts-check
// A text with some of its spans marked (<mark>), built as text nodes: the spans of JSON values
// are nested or apart, so the marks nest too.
import { h } from "./dom.js";

/**
 * @typedef {{ start: number, end: number, className?: string, title?: string, index?: number }} MarkedRange
 */

/**
 * The text as nodes, each range wrapped in a <mark>. An empty range marks one character (a
 * syntax error at the very end marks the space `text` should end with, see the rules editor).
 * @param {string} text
 * @param {MarkedRange[]} ranges
 * @returns {DocumentFragment}
 */
export function markedText(text, ranges) {
  const sorted = ranges
    .map((range) => ({ ...range, end: Math.min(Math.max(range.end, range.start + 1), text.length) }))
    .filter((range) => range.start >= 0 && range.start < range.end)
    .sort((a, b) => a.start - b.start || b.end - a.end);
  const fragment = document.createDocumentFragment();
  /** @type {{ element: Element | DocumentFragment, end: number }[]} */
  const open = [{ element: fragment, end: text.length }];
  let position = 0;
  const top = () => /** @type {{ element: Element | DocumentFragment, end: number }} */ (open.at(-1));
  /** @param {number} until */
  const write = (until) => {
    if (until > position) top().element.append(document.createTextNode(text.slice(position, until)));
    position = Math.max(position, until);
  };
  for (const range of sorted) {
    while (open.length > 1 && top().end <= range.start) {
      write(top().end);
      open.pop();
    }
    write(range.start);
    const mark = h("mark", {
      className: range.className ?? null,
      title: range.title ?? null,
      "data-issue": range.index ?? null,
    });
    top().element.append(mark);
    open.push({ element: mark, end: Math.min(range.end, top().end) });
  }
  while (open.length > 1) {
    write(top().end);
    open.pop();
  }
  write(text.length);
  return fragment;
}
