import type { SecretBox } from "@studyflow/domain/access";
import type { AppDeps } from "../../deps";
import type { ConsoleSessions } from "../../auth/console-session-cookie";
import type { ConsoleProvider } from "./provider";

/** What the sign-in routes share: the provider, the session cookie and the key sealing the attempt. */
export interface ConsoleSignIn {
  deps: AppDeps;
  provider: ConsoleProvider;
  sessions: ConsoleSessions;
  box: SecretBox;
  now: () => Date;
}
