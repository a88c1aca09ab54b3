/** external-identity (scaffold). */
export {};
