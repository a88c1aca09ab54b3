import { errorBody } from "../../errors";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { loadViewer, nameOfViewer } from "./viewer-asset";

/** `gzip` among the accepted encodings, unless refused with q=0. */
const ACCEPTS_GZIP = /(?:^|,)\s*gzip\s*(?:,|$|;\s*q=(?!0(?:\.0*)?\s*(?:,|$)))/i;

/** The viewer script the reference page loads: no part of the API document (hidden). */
export function registerApiReferenceAsset(router: ApiRouter) {
  defineRoute(
    router,
    {
      method: "get",
      path: "/assets/{name}",
      hide: true,
      responses: { 200: { description: "the viewer script" }, 404: { description: "no asset of this name" } },
    },
    async (c) => {
      const name = c.req.param("name");
      if (name !== (await nameOfViewer())) return c.json(errorBody(`no API reference asset named "${name}"`), 404);
      const viewer = await loadViewer();
      const gzipped = ACCEPTS_GZIP.test(c.req.header("Accept-Encoding") ?? "");
      const body = gzipped ? viewer.gzipped : viewer.body;
      return c.body(body, 200, {
        "Content-Type": "text/javascript; charset=utf-8",
        // The address changes with the package version (see ViewerAsset).
        "Cache-Control": "public, max-age=31536000, immutable",
        Vary: "Accept-Encoding",
        ...(gzipped ? { "Content-Encoding": "gzip" } : {}),
      });
    },
  );
}
