/** The one event pipeline: SUBMIT, ENTER, LEAVE, MERGE, CUSTOM and TIMER run the study rules and persist what they change. */
export * from "./event-runner";
export * from "./persist-outcome";
export * from "./apply-event";
export * from "./submit-response";
export * from "./response-version-check";
export * from "./leave-study";
export * from "./enter-study";
export * from "./merge-temporary";
export * from "./merge-virtual";
export * from "./register-temporary";
export * from "./custom-event";
export * from "./rule-failures";
