/** account-deletion (scaffold). */
export {};
