/** The mail queue: queued mails, their recipients, templates rendered at delivery, study messages. */
export * from "./outbox-repository";
export * from "./resolve-recipient";
export * from "./templates";
export * from "./prepare-mail";
export * from "./participant-mail-types";
export * from "./instance-template-mail";
export * from "./study-messages";
