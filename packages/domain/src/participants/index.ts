/** Participant rows: ids, state, message schedules, views, counts, edits, temporary participants. */
export * from "./participant-ids";
export * from "./participant-repository";
export * from "./message-schedule";
export * from "./participant-views";
export * from "./participant-counts";
export * from "./expire-temporary";
export * from "./edit-participant-state";
export * from "./participant-reports";
export * from "./virtual-participants";
