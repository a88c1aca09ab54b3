/** idempotency (scaffold). */
export {};
