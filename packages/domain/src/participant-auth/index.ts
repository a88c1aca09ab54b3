/** participant-auth (scaffold). */
export {};
