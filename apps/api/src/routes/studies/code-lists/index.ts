import type { AppDeps } from "../../../deps";
import { registerAddCodes } from "./add-codes";
import { registerCountCodes } from "./count-codes";
import { registerListCodeLists } from "./list-code-lists";
import { registerListCodes } from "./list-codes";
import { registerRemoveCode } from "./remove-code";
import { createRouter } from "../../create-router";

/** A study's code lists; mounted below the studies router, whose auth covers it. */
export function createCodeListsRouter(deps: AppDeps) {
  const router = createRouter();
  registerListCodeLists(router, deps);
  registerAddCodes(router, deps);
  registerListCodes(router, deps);
  registerCountCodes(router, deps);
  registerRemoveCode(router, deps);
  return router;
}
