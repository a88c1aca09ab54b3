import type { CliCommand } from "../command-definition";
import { timerPauseCommand } from "./timer-pause";
import { timerResumeCommand } from "./timer-resume";
import { timerSetCommand } from "./timer-set";
import { timerShowCommand } from "./timer-show";

/** The timer commands, in the order the usage lists them (one file per command beside this one). */
export const TIMER_COMMANDS: readonly CliCommand[] = [
  timerShowCommand,
  timerSetCommand,
  timerPauseCommand,
  timerResumeCommand,
];
