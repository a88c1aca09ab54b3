// The study timer: schedules, ticks as bulk tasks, pause and resume.
export {
  DEFAULT_TIMER_INTERVAL_SECONDS,
  MAX_TIMER_INTERVAL_SECONDS,
  MIN_TIMER_INTERVAL_SECONDS,
  TIMER_INTERVAL_BOUNDS,
  currentSlot,
  slotStartSeconds,
  type TimerSchedule,
} from "./timer-schedule";
export {
  createTimerTick,
  findDueTimerTicks,
  lastTimerTick,
  listTimerTicks,
  rulesVersionHandlesTimer,
  startDueTimerTicks,
  type DueTick,
  type StartDueTicksOptions,
  type StartedTick,
  type TickCreation,
} from "./timer-ticks";
export {
  checkStudyTimerChange,
  getStudyTimer,
  updateStudyTimer,
  type StudyTimerChange,
  type StudyTimerState,
  type TimerView,
} from "./study-timer-settings";
