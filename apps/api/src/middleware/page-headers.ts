import { secureHeaders } from "hono/secure-headers";

type ContentSecurityPolicy = NonNullable<NonNullable<Parameters<typeof secureHeaders>[0]>["contentSecurityPolicy"]>;

/**
 * The headers of every page the API serves to people (/console, /docs, /reset-password), each
 * under its own content security policy: never framed (X-Frame-Options DENY beside the policy's
 * frame-ancestors 'none', for browsers that predate it; hono's default is SAMEORIGIN), no referrer
 * (the reset page's address carries a token, and no page's address is worth leaking), and no HSTS,
 * which is the TLS terminator's to send for the whole host, not one path's.
 */
export function pageHeaders(contentSecurityPolicy: ContentSecurityPolicy) {
  return secureHeaders({
    contentSecurityPolicy,
    xFrameOptions: "DENY",
    referrerPolicy: "no-referrer",
    strictTransportSecurity: false,
  });
}
