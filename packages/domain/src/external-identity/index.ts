/** Accounts kept at an external OpenID provider, mapped to studyflow users on first use. */
export { userForExternalIdentity, type ExternalIdentity, type ExternalUser } from "./external-users";
