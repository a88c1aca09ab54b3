// @ts-check
// Every element of the console is built here, from data set as text, never parsed as HTML:
// study keys, flags, rule strings and error messages are anyone's input.

/**
 * @typedef {string | number | Node | null | undefined | false} Child
 * @typedef {Record<string, string | number | boolean | null | undefined | ((event: Event) => void)>} Attributes
 */

/**
 * An element with attributes and children. Strings become text nodes; `on…` attributes take
 * listeners; `false`, null and undefined attributes and children are left out.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attributes} [attributes]
 * @param {...(Child | Child[])} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === "function") {
      element.addEventListener(name.replace(/^on/, "").toLowerCase(), value);
    } else if (name === "className") {
      element.className = String(value);
    } else {
      element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(element, ...children);
  return element;
}

/**
 * Appends children (text or nodes) to an element.
 * @param {Element | DocumentFragment} parent
 * @param {...(Child | Child[])} children
 */
export function append(parent, ...children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/**
 * Replaces an element's content.
 * @param {Element} parent
 * @param {...(Child | Child[])} children
 */
export function replace(parent, ...children) {
  parent.replaceChildren();
  append(parent, ...children);
}

/**
 * A description list from label/value pairs (pairs with an undefined value are left out).
 * @param {[string, Child | Child[]][]} pairs
 * @param {string} [className]
 */
export function details(pairs, className = "facts") {
  const list = h("dl", { className });
  for (const [label, value] of pairs) {
    if (value === undefined) continue;
    list.append(h("dt", {}, label), h("dd", {}, value));
  }
  return list;
}

/**
 * A message for someone reading the page: an error (role alert) or a note.
 * @param {string} text
 * @param {"error" | "note"} [kind]
 */
export function notice(text, kind = "note") {
  return h("p", { className: `notice notice-${kind}`, role: kind === "error" ? "alert" : null }, text);
}
