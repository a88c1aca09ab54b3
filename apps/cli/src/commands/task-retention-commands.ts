import type { CliCommand } from "../command-definition";
import { studyTaskRetentionCommand } from "./study-task-retention";
import { tasksPruneCommand } from "./tasks-prune";

/** The task retention commands, in the order the usage lists them (one file per command beside this one). */
export const TASK_RETENTION_COMMANDS: readonly CliCommand[] = [studyTaskRetentionCommand, tasksPruneCommand];
