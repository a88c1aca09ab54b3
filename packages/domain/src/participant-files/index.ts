/** participant-files (scaffold). */
export {};
