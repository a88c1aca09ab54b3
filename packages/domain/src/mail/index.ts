/** Rendered mail parts every mail sender shares: documents, HTML escaping, undeliverable messages. */
export * from "./undeliverable-message";
export * from "./mail-document";
