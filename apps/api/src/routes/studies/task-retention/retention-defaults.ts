import type { TaskRetentionDefaults } from "@studyflow/domain/tasks";
import type { AppDeps } from "../../../deps";

/** The deployment's retention, which a study's unset (null) retention falls back to. */
export function retentionDefaults(deps: AppDeps): TaskRetentionDefaults {
  return { days: deps.config.TASK_RETENTION_DAYS, timerDays: deps.config.TIMER_TASK_RETENTION_DAYS };
}
