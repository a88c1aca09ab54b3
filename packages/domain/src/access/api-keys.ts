// Service accounts: API keys, stored hashed, with an expiry, revocable.
export {};
