import { isIP } from "node:net";
import { z } from "zod";
import {
  ConfigError,
  demoSettings,
  externalServiceSettings,
  caseStudySettings,
  resultDir,
  logLevel,
  milliseconds,
  parseEnv,
  port,
  postgresUrl,
  productionSecretIssues,
  queuePrefix,
  redisUrl,
  nodeEnv,
  secret,
  tokenSettings,
  taskRetentionSettings,
  timerSettings,
  withDevSecrets,
} from "@studyflow/config";
import { managementSecretsSettings } from "@studyflow/domain/access";
import { TASK_RETENTION_DEFAULTS } from "@studyflow/domain/tasks";
import { TIMER_INTERVAL_BOUNDS } from "@studyflow/domain/timer";

/** The types packages/domain/src/participant-files/file-types.ts can tell from a file's bytes. */
const KNOWN_PARTICIPANT_FILE_TYPES = ["image/jpeg", "image/png", "image/gif", "image/webp", "application/pdf"] as const;

const participantFileTypes = z
  .string()
  .default("image/jpeg,image/png")
  .transform((raw) =>
    raw
      .split(",")
      .map((type) => type.trim().toLowerCase())
      .filter((type) => type !== ""),
  )
  .pipe(z.array(z.enum(KNOWN_PARTICIPANT_FILE_TYPES)).min(1, "name at least one content type"));

/** Comma-separated IP addresses (IPv4 or IPv6), as the client address of a request reads. */
const addressList = z
  .string()
  .default("")
  .transform((raw) =>
    raw
      .split(",")
      .map((address) => address.trim())
      .filter((address) => address !== ""),
  )
  .pipe(z.array(z.string().refine((address) => isIP(address) !== 0, "must be IP addresses, comma-separated")));

/** Asymmetric JWS algorithms jose verifies with a provider's public keys. */
const ASYMMETRIC_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
] as const;

/** Accepted signature algorithms of an external provider, comma-separated. */
const oidcAlgorithms = z
  .string()
  .default("RS256,ES256")
  .transform((raw) =>
    raw
      .split(",")
      .map((alg) => alg.trim())
      .filter((alg) => alg !== ""),
  )
  .pipe(
    z
      .array(z.enum(ASYMMETRIC_ALGORITHMS, { error: `must be among ${ASYMMETRIC_ALGORITHMS.join(", ")}` }))
      .min(1, "name at least one algorithm"),
  );

/** A file the API reads at start (PEM certificates and keys). */
const filePath = z.string().min(1).max(4096);

const schema = z.object({
  NODE_ENV: nodeEnv,
  /** Published secrets accepted in production, for the compose demo only (packages/config). */
  ...demoSettings,
  /** Port the HTTP API listens on. */
  PORT: port(8080),
  /** Interface to bind; 0.0.0.0 inside containers. */
  HOST: z.string().default("0.0.0.0"),
  /** PostgreSQL connection string. */
  DATABASE_URL: postgresUrl,
  /** Connections in the API's pool: one per concurrent transaction. */
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  /** Redis for the job queue and rate limits. */
  REDIS_URL: redisUrl,
  /** Key prefix of every BullMQ key; api and worker must agree. */
  QUEUE_PREFIX: queuePrefix,
  ...tokenSettings,
  /**
   * Reverse proxies in front of the API that append the client's address to X-Forwarded-For
   * (compose has none: 0; one nginx or load balancer: 1). 0 ignores the header, which any client
   * can forge; with n the address the outermost trusted proxy added is the client.
   */
  TRUST_PROXY: z.coerce.number().int().min(0).max(10).default(0),
  /**
   * Servers of participant apps that call the participant API on behalf of every participant
   * (CASE apps built on server-side calls, such as tekenradar's Next.js server), as client
   * addresses. Per-address rate limits do not count their requests: they would count all
   * participants together and lock everyone out at once. Per-account limits still apply.
   */
  PARTICIPANT_APP_ADDRESSES: addressList,
  /**
   * An identity provider whose management tokens (researchers, operators) are accepted besides
   * studyflow's own: its JWKS. Set together with MANAGEMENT_OIDC_ISSUER and MANAGEMENT_OIDC_AUDIENCE;
   * unset, management tokens are studyflow's own only.
   */
  MANAGEMENT_JWKS_URL: z.url().optional(),
  /** The provider's issuer exactly as its tokens carry it in `iss`. */
  MANAGEMENT_OIDC_ISSUER: z.url().optional(),
  /** The `aud` the provider's tokens must carry for this API (its client id or resource indicator). */
  MANAGEMENT_OIDC_AUDIENCE: z.string().min(1).max(500).optional(),
  /** The provider's signature algorithms accepted, comma-separated; asymmetric ones only. */
  MANAGEMENT_OIDC_ALGORITHMS: oidcAlgorithms,
  /**
   * The claim of a provider's token that makes its bearer an admin: a claim name (`groups`,
   * `https://example.org/roles`) or a dotted path into nested claims (`realm_access.roles`). Set
   * together with MANAGEMENT_OIDC_ADMIN_VALUE; unset, no provider token is ever admin (its
   * subject's permissions still apply), whatever it claims, `admin: true` included.
   */
  MANAGEMENT_OIDC_ADMIN_CLAIM: z.string().min(1).max(200).optional(),
  /** The value that claim must hold: equal to it, or among its elements when it is a list. */
  MANAGEMENT_OIDC_ADMIN_VALUE: z.string().min(1).max(500).optional(),
  /**
   * An external OpenID provider whose tokens participants may use instead of studyflow's (for
   * deployments that keep accounts elsewhere): its issuer exactly as tokens carry it in `iss`. Set
   * together with PARTICIPANT_OIDC_AUDIENCE; unset, participant tokens are studyflow's own only.
   */
  PARTICIPANT_OIDC_ISSUER: z.url().optional(),
  /** The `aud` the provider's tokens must carry for this API (its client id or resource indicator). */
  PARTICIPANT_OIDC_AUDIENCE: z.string().min(1).max(500).optional(),
  /** The provider's JWKS; default: the `jwks_uri` of the issuer's /.well-known/openid-configuration. */
  PARTICIPANT_OIDC_JWKS_URL: z.url().optional(),
  /**
   * The signature algorithms accepted from the provider, comma-separated; asymmetric ones only (a
   * symmetric key would be shared with the provider, and `none` is no signature).
   */
  PARTICIPANT_OIDC_ALGORITHMS: oidcAlgorithms,
  /**
   * case-admin's sign-in (POST /v1/auth/signin-with-idp) is accepted only from a caller that
   * proves itself: with this set, one that sends it in X-Signin-Secret (compared in constant
   * time). Without it and without the mTLS listener below, that sign-in is off (401 always).
   */
  MANAGEMENT_IDP_SIGNIN_SECRET: secret.regex(/^[\x21-\x7e]+$/, "must be printable ASCII without spaces").optional(),
  /**
   * A second, TLS-only listener for that sign-in, which asks callers for a client certificate
   * signed by MANAGEMENT_IDP_SIGNIN_MTLS_CA: a caller with an accepted certificate proves itself
   * there. Set with _CA, _CERT and _KEY; must differ from PORT and METRICS_PORT (0: any free port).
   */
  MANAGEMENT_IDP_SIGNIN_MTLS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** PEM file of the CA(s) whose client certificates the mTLS listener accepts. */
  MANAGEMENT_IDP_SIGNIN_MTLS_CA: filePath.optional(),
  /** PEM file of the mTLS listener's own certificate (chain). */
  MANAGEMENT_IDP_SIGNIN_MTLS_CERT: filePath.optional(),
  /** PEM file of the mTLS listener's private key. */
  MANAGEMENT_IDP_SIGNIN_MTLS_KEY: filePath.optional(),
  /** The provider role (in the sign-in's `roles`) that makes a management user an admin; CASE's is "ADMIN". */
  MANAGEMENT_IDP_ADMIN_ROLE: z.string().min(1).max(200).default("ADMIN"),
  /**
   * Key of sealed secrets (AES-256-GCM): the identity provider's refresh tokens of management
   * sessions, the console's sign-in state and a new service-account API key until its creator's
   * first key list (10 minutes at most; without this key, no copy is kept). Base64 of 32 bytes
   * (`openssl rand -base64 32`).
   * Development default outside production; production requires it when a sign-in (case-admin's
   * or the console's) is configured.
   */
  MANAGEMENT_SECRETS_KEY: managementSecretsSettings.MANAGEMENT_SECRETS_KEY,
  /** Earlier keys, comma-separated: values sealed under them still open after a rotation. */
  MANAGEMENT_SECRETS_PREVIOUS_KEYS: managementSecretsSettings.MANAGEMENT_SECRETS_PREVIOUS_KEYS,
  /** Lifetime of a management token from sign-in or extend-session (CASE's default: one hour). */
  MANAGEMENT_TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(3_600),
  /** Lifetime of a management session and the refresh token it holds (CASE keeps them two days). */
  MANAGEMENT_SESSION_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(300)
    .max(90 * 86_400)
    .default(2 * 86_400),
  /**
   * Longest a management session lasts from its sign-in, however often it is extended (and a cap on
   * MANAGEMENT_SESSION_TTL_SECONDS): one working day, 10 h. A researcher signs in once a day; a
   * stolen session token or provider refresh token works until that day's end at most, after which
   * extend-session answers 401 and the person signs in again at the provider.
   */
  MANAGEMENT_SESSION_MAX_AGE_SECONDS: z.coerce
    .number()
    .int()
    .min(300)
    .max(30 * 86_400)
    .default(36_000),
  /**
   * case-admin's OpenID provider (case-admin's MS_ENTRA_ISSUER), with MANAGEMENT_IDP_CLIENT_ID: then
   * extend-session accepts a `renewToken` only after refreshing it there (OAuth refresh grant) for
   * the session's own person. Unset, the session's own token is the only proof (see api.md).
   */
  MANAGEMENT_IDP_ISSUER: z.url().optional(),
  /** case-admin's client id at that provider (its AZURE_AD_CLIENT_ID): refresh tokens are bound to it. */
  MANAGEMENT_IDP_CLIENT_ID: z.string().min(1).max(500).optional(),
  /** case-admin's client secret there (its AZURE_AD_CLIENT_SECRET); unset for a public client. */
  MANAGEMENT_IDP_CLIENT_SECRET: z.string().min(1).max(2000).optional(),
  /**
   * The OpenID provider the console signs in with (authorization code + PKCE): its issuer.
   * Set with CONSOLE_OIDC_CLIENT_ID and CONSOLE_OIDC_REDIRECT_URI; unset, the console takes a
   * pasted token only.
   */
  CONSOLE_OIDC_ISSUER: z.url().optional(),
  /** The console's client id at that provider. */
  CONSOLE_OIDC_CLIENT_ID: z.string().min(1).max(500).optional(),
  /** The console's client secret; unset for a public client (PKCE only). */
  CONSOLE_OIDC_CLIENT_SECRET: z.string().min(1).max(2000).optional(),
  /** Where the provider sends the browser back: this API's /console/oidc/callback as users reach it. */
  CONSOLE_OIDC_REDIRECT_URI: z.url().optional(),
  /** The scopes the console asks for, space-separated; `openid` is always among them. */
  CONSOLE_OIDC_SCOPES: z
    .string()
    .default("openid email profile")
    .transform((raw) => [...new Set(["openid", ...raw.split(/[\s,]+/).filter((scope) => scope !== "")])])
    .pipe(z.array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, "must be OAuth scope tokens")).max(50)),
  /** The provider's name on the console's sign-in button ("Sign in with …"); default: the issuer's host. */
  CONSOLE_OIDC_PROVIDER_NAME: z.string().trim().min(1).max(100).optional(),
  /**
   * The claim of the console's sign-in (ID token, else userinfo) that makes the person an admin: a
   * name (`groups`) or a dotted path (`realm_access.roles`). Set with CONSOLE_OIDC_ADMIN_VALUE;
   * unset, no console sign-in is admin and permissions come from the user's grants alone.
   */
  CONSOLE_OIDC_ADMIN_CLAIM: z.string().min(1).max(200).optional(),
  /** The value that claim must hold: equal to it, or among its elements when it is a list. */
  CONSOLE_OIDC_ADMIN_VALUE: z.string().min(1).max(500).optional(),
  /** Directory of task result files, shared with the worker (a volume in compose). */
  RESULT_DIR: resultDir,
  /**
   * Where the workers keep export files, as they are configured: "postgres" (default) or
   * "filesystem" (under RESULT_DIR). The export downloads read them from there.
   */
  EXPORT_FILE_STORE: z.enum(["postgres", "filesystem"]).default("postgres"),
  /** Lifetime of a participant access token from sign-in or renewal (CASE's `expiresIn`). */
  PARTICIPANT_ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(3_600),
  /** Lifetime of one participant refresh token: a session left unused this long ends. */
  PARTICIPANT_REFRESH_TOKEN_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(300)
    .default(30 * 86_400),
  /** Absolute end of a participant sign-in session, however often it is renewed. */
  PARTICIPANT_SESSION_MAX_AGE_SECONDS: z.coerce
    .number()
    .int()
    .min(300)
    .default(90 * 86_400),
  /**
   * How long a just-spent refresh token still renews (two tabs renewing at once, a retried
   * renewal whose answer was lost); presented later it counts as stolen and ends the session.
   */
  PARTICIPANT_REFRESH_GRACE_SECONDS: z.coerce.number().int().min(0).max(300).default(30),
  /** Lifetime of a verify-email link. */
  VERIFY_EMAIL_TOKEN_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(300)
    .default(7 * 86_400),
  /**
   * DELETE /v1/user needs a proof of identity this recent: the session's password sign-in or its
   * last verified e-mail OTP; older, the body must carry the current password. An hour covers a
   * participant who signs in to delete the account, not a token left open on a shared computer.
   */
  ACCOUNT_DELETION_REAUTH_SECONDS: z.coerce.number().int().min(60).max(86_400).default(3_600),
  /** Age after which a temporary participant can no longer be merged. */
  TEMP_PARTICIPANT_MAX_AGE_SECONDS: z.coerce.number().int().min(60).default(86_400),
  /** The study timer's default interval, as the workers schedule it: GET …/timer shows it (packages/config). */
  ...timerSettings(TIMER_INTERVAL_BOUNDS),
  /** Task retention as the workers apply it: GET …/task-retention shows it (packages/config). */
  ...taskRetentionSettings(TASK_RETENTION_DEFAULTS),
  /**
   * Largest file a participant may upload, in bytes (case-backend's limit: 20 MiB). The upload
   * route takes a body this large plus its form fields; a study's upload rule can ask for less.
   */
  PARTICIPANT_FILE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(100 * 1024 * 1024)
    .default(20 * 1024 * 1024),
  /**
   * Content types a participant may upload, comma-separated, read from the file's bytes (not the
   * declared type). Known: image/jpeg, image/png, image/gif, image/webp, application/pdf;
   * case-backend allows the first two.
   */
  PARTICIPANT_FILE_TYPES: participantFileTypes,
  /** Time given to in-flight requests at shutdown before connections are cut. */
  SHUTDOWN_TIMEOUT_MS: milliseconds(10_000),
  /**
   * An admin port of its own for GET /metrics (Prometheus' exporters use 9464), kept off the
   * public network; the API's port then answers 404 there. Unset: see METRICS_TOKEN.
   */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Interface of the metrics port; default: HOST. */
  METRICS_HOST: z.string().min(1).optional(),
  /**
   * A bearer token scrapers must send (`Authorization: Bearer …`) wherever /metrics is served.
   * With neither METRICS_PORT nor this set, /metrics is public on the API's port outside
   * production and served nowhere in production.
   */
  METRICS_TOKEN: secret.regex(/^[\x21-\x7e]+$/, "must be printable ASCII without spaces").optional(),
  /**
   * The participant app's page that proves an address: mailed links to it carry `?token=…`, which
   * the page posts to POST /v1/auth/verify-email (a change of the sign-in address uses it).
   * CASE's participant apps serve it at /link/verify-contact.
   */
  VERIFY_EMAIL_URL: z.url().default("http://localhost:3000/link/verify-contact"),
  ...externalServiceSettings,
  ...caseStudySettings,
  LOG_LEVEL: logLevel,
});

export type ApiConfig = z.output<typeof schema>;

/** The variables the API reads, with their defaults: e2e/test/compose-check.test.ts holds docker-compose.yml to them. */
export const configSchema = schema;

export function loadConfig(env: Record<string, string | undefined>): ApiConfig {
  const config = parseEnv(schema, withDevSecrets(env));
  const issues: string[] = [];
  // Half an external provider would accept tokens for any audience, or of no known issuer.
  const oidc = ["PARTICIPANT_OIDC_ISSUER", "PARTICIPANT_OIDC_AUDIENCE"] as const;
  const oidcMissing = oidc.filter((name) => config[name] === undefined);
  const oidcSet = oidc.length - oidcMissing.length > 0 || config.PARTICIPANT_OIDC_JWKS_URL !== undefined;
  if (oidcSet && oidcMissing.length > 0) {
    issues.push(
      ...oidcMissing.map(
        (name) => `${name}: is required when an external participant token provider is configured (PARTICIPANT_OIDC_*)`,
      ),
    );
  }
  // Secrets written in the repository (development and demo defaults) sign anyone in: refused in production.
  issues.push(...productionSecretIssues(config));
  issues.push(...managementProviderIssues(env, config));
  issues.push(...managementSignInIssues(env, config));
  if (config.METRICS_PORT !== undefined && config.METRICS_PORT !== 0 && config.METRICS_PORT === config.PORT) {
    issues.push("METRICS_PORT: must differ from PORT (the metrics port is kept off the public network)");
  }
  if (config.METRICS_HOST !== undefined && config.METRICS_PORT === undefined) {
    issues.push("METRICS_HOST: is used only with METRICS_PORT; set METRICS_PORT too, or leave METRICS_HOST out");
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return config;
}

/**
 * The management token provider's settings, all or none: without an issuer and an audience, any
 * token the provider signs (for any of its applications) would open the management API.
 */
function managementProviderIssues(env: Record<string, string | undefined>, config: ApiConfig): string[] {
  const related = [
    "MANAGEMENT_OIDC_ISSUER",
    "MANAGEMENT_OIDC_AUDIENCE",
    "MANAGEMENT_OIDC_ALGORITHMS",
    "MANAGEMENT_OIDC_ADMIN_CLAIM",
    "MANAGEMENT_OIDC_ADMIN_VALUE",
  ] as const;
  if (config.MANAGEMENT_JWKS_URL === undefined) {
    return related
      .filter((name) => env[name] !== undefined)
      .map((name) => `${name}: is used only with MANAGEMENT_JWKS_URL; set it too, or leave ${name} out`);
  }
  const issues = (["MANAGEMENT_OIDC_ISSUER", "MANAGEMENT_OIDC_AUDIENCE"] as const)
    .filter((name) => config[name] === undefined)
    .map((name) => `${name}: is required when MANAGEMENT_JWKS_URL is set`);
  const admin = ["MANAGEMENT_OIDC_ADMIN_CLAIM", "MANAGEMENT_OIDC_ADMIN_VALUE"] as const;
  const adminMissing = admin.filter((name) => config[name] === undefined);
  if (adminMissing.length === 1) {
    const [missing] = adminMissing;
    const other = admin.find((name) => name !== missing);
    issues.push(`${missing}: is required when ${other} is set`);
  }
  return issues;
}

/** Whether case-admin's sign-in can be proven at all (a shared secret or the mTLS listener). */
export const idpSignInEnabled = (config: ApiConfig): boolean =>
  config.MANAGEMENT_IDP_SIGNIN_SECRET !== undefined || config.MANAGEMENT_IDP_SIGNIN_MTLS_PORT !== undefined;

/** Whether the console signs in with an OpenID provider. */
export const consoleOidcEnabled = (config: ApiConfig): boolean => config.CONSOLE_OIDC_ISSUER !== undefined;

/**
 * Sign-in settings: the mTLS listener's four together, the console's provider whole, and a key
 * of sealed secrets whenever a sign-in stores refresh tokens (in production there is no default).
 */
function managementSignInIssues(env: Record<string, string | undefined>, config: ApiConfig): string[] {
  const issues: string[] = [];
  const mtls = [
    "MANAGEMENT_IDP_SIGNIN_MTLS_PORT",
    "MANAGEMENT_IDP_SIGNIN_MTLS_CA",
    "MANAGEMENT_IDP_SIGNIN_MTLS_CERT",
    "MANAGEMENT_IDP_SIGNIN_MTLS_KEY",
  ] as const;
  const mtlsMissing = mtls.filter((name) => config[name] === undefined);
  if (mtlsMissing.length > 0 && mtlsMissing.length < mtls.length) {
    issues.push(...mtlsMissing.map((name) => `${name}: is required when any MANAGEMENT_IDP_SIGNIN_MTLS_* is set`));
  }
  const mtlsPort = config.MANAGEMENT_IDP_SIGNIN_MTLS_PORT;
  if (mtlsPort !== undefined && mtlsPort !== 0 && (mtlsPort === config.PORT || mtlsPort === config.METRICS_PORT)) {
    issues.push("MANAGEMENT_IDP_SIGNIN_MTLS_PORT: must differ from PORT and METRICS_PORT");
  }
  issues.push(...consoleProviderIssues(env, config));
  issues.push(...caseAdminProviderIssues(config));
  if (config.MANAGEMENT_SECRETS_KEY === undefined && (idpSignInEnabled(config) || consoleOidcEnabled(config))) {
    issues.push(
      "MANAGEMENT_SECRETS_KEY: is required when a sign-in is configured (MANAGEMENT_IDP_SIGNIN_* or CONSOLE_OIDC_*): " +
        "it seals the provider's refresh tokens",
    );
  }
  return issues;
}

/** case-admin's provider: issuer and client id together, the secret only with them, https in production. */
function caseAdminProviderIssues(config: ApiConfig): string[] {
  const issues: string[] = [];
  const { MANAGEMENT_IDP_ISSUER: issuer, MANAGEMENT_IDP_CLIENT_ID: clientId } = config;
  if (issuer !== undefined && clientId === undefined) {
    issues.push("MANAGEMENT_IDP_CLIENT_ID: is required when MANAGEMENT_IDP_ISSUER is set");
  }
  if (issuer === undefined && (clientId !== undefined || config.MANAGEMENT_IDP_CLIENT_SECRET !== undefined)) {
    issues.push("MANAGEMENT_IDP_ISSUER: is required when MANAGEMENT_IDP_CLIENT_ID or _SECRET is set");
  }
  if (config.NODE_ENV === "production" && issuer !== undefined && !issuer.startsWith("https://")) {
    issues.push("MANAGEMENT_IDP_ISSUER: must be https:// in production (its token calls carry refresh tokens)");
  }
  return issues;
}

/**
 * The console's provider whole (issuer, client id, redirect URI), https in production, and the
 * admin claim with its value; its other settings only with it.
 */
function consoleProviderIssues(env: Record<string, string | undefined>, config: ApiConfig): string[] {
  const issues: string[] = [];
  const oidc = ["CONSOLE_OIDC_ISSUER", "CONSOLE_OIDC_CLIENT_ID", "CONSOLE_OIDC_REDIRECT_URI"] as const;
  const optional = [
    "CONSOLE_OIDC_CLIENT_SECRET",
    "CONSOLE_OIDC_SCOPES",
    "CONSOLE_OIDC_PROVIDER_NAME",
    "CONSOLE_OIDC_ADMIN_CLAIM",
    "CONSOLE_OIDC_ADMIN_VALUE",
  ] as const;
  const oidcMissing = oidc.filter((name) => config[name] === undefined);
  const oidcSet = oidcMissing.length < oidc.length || optional.some((name) => env[name] !== undefined);
  if (oidcSet && oidcMissing.length > 0) {
    issues.push(
      ...oidcMissing.map((name) => `${name}: is required when the console's provider is configured (CONSOLE_OIDC_*)`),
    );
  }
  if (config.NODE_ENV === "production") {
    const redirect = config.CONSOLE_OIDC_REDIRECT_URI;
    if (redirect !== undefined && !redirect.startsWith("https://")) {
      issues.push("CONSOLE_OIDC_REDIRECT_URI: must be https:// in production (the session cookie is Secure)");
    }
    const issuer = config.CONSOLE_OIDC_ISSUER;
    if (issuer !== undefined && !issuer.startsWith("https://")) {
      issues.push("CONSOLE_OIDC_ISSUER: must be https:// in production (its discovery and token calls carry secrets)");
    }
  }
  const admin = ["CONSOLE_OIDC_ADMIN_CLAIM", "CONSOLE_OIDC_ADMIN_VALUE"] as const;
  const adminMissing = admin.filter((name) => config[name] === undefined);
  if (adminMissing.length === 1) {
    const [missing] = adminMissing;
    issues.push(`${missing}: is required when ${admin.find((name) => name !== missing)} is set`);
  }
  return issues;
}

/** The process environment: read here and nowhere else. */
export const processEnv = (): Record<string, string | undefined> => process.env;
