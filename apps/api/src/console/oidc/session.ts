import type { Hono } from "hono";
import { Unauthorized } from "@studyflow/domain/errors";
import { recordAudit } from "@studyflow/domain/foundation";
import {
  endManagementSession,
  findManagementUser,
  userOfOpenManagementSession,
} from "@studyflow/domain/management-users";
import type { AppEnv } from "../../app-env";
import type { ConsoleSignIn } from "./sign-in";

/**
 * GET /console/oidc/session: who the session cookie signs in ({subject, displayName, email,
 * isAdmin, csrfToken}), 401 without an open session (the cookie is removed then). The console
 * reads it at start: the CSRF token it answers goes into X-CSRF-Token on every call. Another
 * site's page cannot read it (no CORS) nor make the browser send the cookie (SameSite=Strict).
 *
 * POST /console/oidc/sign-out: ends the session (CSRF token required) and removes the cookie.
 */
export function registerSession(router: Hono<AppEnv>, { deps, sessions, now }: ConsoleSignIn) {
  const db = deps.database.db;

  router.get("/session", async (c) => {
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
  });

  router.post("/sign-out", async (c) => {
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
    sessions.clear(c);
    return c.json({ signedOut: true }, 200);
  });
}
