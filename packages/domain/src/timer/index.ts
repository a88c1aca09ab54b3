// The study timer: schedules, ticks as bulk tasks, pause and resume.
export {};
