import type { SessionTokenSettings } from "@studyflow/domain/participant-sessions";
import type { ApiConfig } from "../../config";

/** The token and session lifetimes of participant sign-in, from the API's configuration. */
export function sessionTokenSettings(config: ApiConfig): SessionTokenSettings {
  return {
    secret: config.PARTICIPANT_JWT_SECRET,
    accessTokenTtlSeconds: config.PARTICIPANT_ACCESS_TOKEN_TTL_SECONDS,
    refreshTokenTtlSeconds: config.PARTICIPANT_REFRESH_TOKEN_TTL_SECONDS,
    sessionMaxAgeSeconds: config.PARTICIPANT_SESSION_MAX_AGE_SECONDS,
    refreshGraceSeconds: config.PARTICIPANT_REFRESH_GRACE_SECONDS,
  };
}
