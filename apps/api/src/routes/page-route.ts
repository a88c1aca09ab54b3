/**
 * A page for people at its router's root (the API reference, the reset-password form): served by
 * GET, no part of the API document.
 */
export const PAGE_ROUTE = {
  method: "get",
  path: "/",
  hide: true,
  responses: { 200: { description: "the page" } },
} as const;

/**
 * The Content-Security-Policy directives every page shares, after its own sources: it calls this
 * origin only, sets no base address, posts no form, and no other page may frame it.
 */
export const PAGE_CSP_LIMITS = {
  connectSrc: ["'self'"],
  baseUri: ["'none'"],
  formAction: ["'none'"],
  frameAncestors: ["'none'"],
};
