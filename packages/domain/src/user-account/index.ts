/** user-account (scaffold). */
export {};
