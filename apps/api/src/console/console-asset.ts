import { errorBody } from "../errors";
import type { ApiRouter } from "../routes/create-router";
import { defineRoute } from "../routes/define-route";

/** A file of the console's assets folder, read once at start. */
export interface ConsoleAsset {
  body: string;
  contentType: string;
}

/** GET /console/assets/{name}: a script or style of the console; 404 for any other name. */
export function registerConsoleAsset(router: ApiRouter, assets: ReadonlyMap<string, ConsoleAsset>) {
  defineRoute(
    router,
    {
      method: "get",
      path: "/assets/{name}",
      hide: true,
      responses: { 200: { description: "a console script or style" }, 404: { description: "no asset of this name" } },
    },
    (c) => {
      const name = c.req.param("name");
      const asset = assets.get(name);
      if (!asset) return c.json(errorBody(`no console asset named "${name}"`), 404);
      return c.body(asset.body, 200, { "Content-Type": asset.contentType });
    },
  );
}
