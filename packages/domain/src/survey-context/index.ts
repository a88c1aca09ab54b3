/** survey-context (scaffold). */
export {};
