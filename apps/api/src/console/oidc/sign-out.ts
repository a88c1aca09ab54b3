import { forgetCached } from "@studyflow/domain/cache";
import { Unauthorized } from "@studyflow/domain/errors";
import { recordAudit } from "@studyflow/domain/foundation";
import { endManagementSession, userOfOpenManagementSession } from "@studyflow/domain/management-users";
import type { ApiRouter } from "../../routes/create-router";
import { defineRoute } from "../../routes/define-route";
import type { ConsoleSignIn } from "./sign-in";

/** POST /console/oidc/sign-out: ends the session (CSRF token required) and removes the cookie. */
export function registerSignOut(router: ApiRouter, { deps, sessions, now }: ConsoleSignIn) {
  const db = deps.database.db;
  defineRoute(
    router,
    { method: "post", path: "/sign-out", hide: true, responses: { 200: { description: "signed out" } } },
    async (c) => {
      c.header("Cache-Control", "no-store");
      const sessionId = sessions.sessionOf(c);
      if (sessionId === undefined) throw new Unauthorized("not signed in");
      sessions.checkCsrf(c, sessionId);
      const at = now();
      const userId = await userOfOpenManagementSession(db, sessionId, at);
      await db.transaction(async (tx) => {
        if (!(await endManagementSession(tx, sessionId, at)) || userId === undefined) return;
        await recordAudit(
          tx,
          {
            studyKey: null,
            actor: userId,
            action: "session.signout",
            target: userId,
            details: { sessionId, kind: "console" },
          },
          at,
        );
      });
      // this process answers the next request with the cookie: not from its cache before the change's announcement arrives
      forgetCached(db, "management-session", sessionId);
      sessions.clear(c);
      return c.json({ signedOut: true }, 200);
    },
  );
}
