import { Unauthorized } from "@studyflow/domain/errors";
import { findManagementUser, userOfOpenManagementSession } from "@studyflow/domain/management-users";
import type { ApiRouter } from "../../routes/create-router";
import { defineRoute } from "../../routes/define-route";
import type { ConsoleSignIn } from "./sign-in";

/**
 * GET /console/oidc/session: who the session cookie signs in ({subject, displayName, email,
 * isAdmin, csrfToken}), 401 without an open session (the cookie is removed then). The console
 * reads it at start: the CSRF token it answers goes into X-CSRF-Token on every call. Another
 * site's page cannot read it (no CORS) nor make the browser send the cookie (SameSite=Strict).
 */
export function registerSession(router: ApiRouter, { deps, sessions, now }: ConsoleSignIn) {
  const db = deps.database.db;

  defineRoute(
    router,
    { method: "get", path: "/session", hide: true, responses: { 200: { description: "who the cookie signs in" } } },
    async (c) => {
      c.header("Cache-Control", "no-store");
      const sessionId = sessions.sessionOf(c);
      if (sessionId === undefined) throw new Unauthorized("not signed in");
      const userId = await userOfOpenManagementSession(db, sessionId, now());
      const user = userId === undefined ? null : await findManagementUser(db, userId);
      if (!user) {
        sessions.clear(c);
        throw new Unauthorized("session ended: sign in again");
      }
      return c.json(
        {
          subject: user.id,
          displayName: user.username || user.email || user.sub,
          email: user.email,
          isAdmin: user.isAdmin,
          csrfToken: sessions.csrfToken(sessionId),
        },
        200,
      );
    },
  );
}
