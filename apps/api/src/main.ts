/** The API process: configuration, logging, the server and its signals (started by index.ts). */
import { demoModeWarning, exitOnUnhandledErrors, loadConfigOrExit, startupStep } from "@studyflow/config";
import { externalServiceCallerFromConfig } from "@studyflow/domain/external";
import { setCaseStudyGlobalSecret } from "@studyflow/domain/participants";
import { loadConfig, processEnv } from "./config";
import { createLogger } from "./logger";
import { startApiServer } from "./server";

const config = loadConfigOrExit(() => loadConfig(processEnv()));
setCaseStudyGlobalSecret(config.CASE_STUDY_GLOBAL_SECRET);
const logger = createLogger(config.LOG_LEVEL, config.NODE_ENV === "development");
exitOnUnhandledErrors(logger);
const demoWarning = demoModeWarning(config);
if (demoWarning !== undefined) logger.warn(demoWarning);
const callExternalService = await startupStep(logger, "external services", () =>
  externalServiceCallerFromConfig(config),
);
const api = startApiServer({ config, logger, ...(callExternalService ? { callExternalService } : {}) });
process.on("SIGTERM", () => void api.shutdown("SIGTERM"));
process.on("SIGINT", () => void api.shutdown("SIGINT"));
process.on("SIGHUP", () => void api.shutdown("SIGHUP"));
