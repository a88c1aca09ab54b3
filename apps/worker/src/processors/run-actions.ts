import { UnrecoverableError, type Processor } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { DbHandle } from "@studyflow/db";

export interface RunActionsProcessorDeps {
  database: DbHandle;
  connection: Redis;
  prefix: string;
  resultDir: string;
  logger: Logger;
}

// The bulk pipeline lands with the worker issue; until then a job fails visibly instead of hanging.
export function createRunActionsProcessor(_deps: RunActionsProcessorDeps): Processor {
  return () => Promise.reject(new UnrecoverableError("run-actions processing is not implemented yet"));
}
