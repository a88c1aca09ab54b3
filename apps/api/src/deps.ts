import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { DbHandle } from "@studyflow/db";
import type { ReadCache } from "@studyflow/domain/cache";
import type { RuleFailureRecord } from "@studyflow/domain/events";
import type { FileStore } from "@studyflow/domain/files";
import type { ClockContext } from "@studyflow/domain/foundation";
import type { ExternalServiceCaller } from "@studyflow/domain/rules";
import type { ApiConfig } from "./config";

/**
 * Everything the API needs from outside, passed in so tests build the real app on their own
 * services. Its clock is the one every request's time comes from: the server passes the system's,
 * tests one they stop or move.
 */
export interface AppDeps extends ClockContext {
  config: ApiConfig;
  database: DbHandle;
  /** Producer connection: rate limits and readiness. */
  redis: Redis;
  taskQueue: Queue;
  logger: Logger;
  /** The study rules' external services (EXTERNAL_SERVICES_FILE); absent = none configured. */
  callExternalService?: ExternalServiceCaller;
  /**
   * Study rows, rules, permissions, revocations, service keys and token versions kept in memory,
   * kept current by the database's announcements (see listenForCacheChanges). Absent: every
   * request reads them from the database.
   */
  readCache?: ReadCache;
  /**
   * Where export files are read from: the store the workers write them to. Absent = the store
   * EXPORT_FILE_STORE names (PostgreSQL over `database` by default).
   */
  fileStore?: FileStore;
  /** Told of every recorded rule failure; createApp counts them in its metrics. */
  onRuleFailures?: (failures: readonly RuleFailureRecord[]) => void;
}
