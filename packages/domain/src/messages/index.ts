// Participant messages: templates, due scheduled messages into the outbox, the due-time index.
export {};
