/** participant-data (scaffold). */
export {};
