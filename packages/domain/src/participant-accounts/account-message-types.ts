/**
 * CASE's message types of the account mails the domain queues by name: the confirmation of a
 * deletion the participant asked for (a built-in template), and the lifecycle mails of
 * case-backend's user-management job, which the instance's templates of these types render, as
 * case-backend's do.
 */

/** The confirmation that an account was deleted. */
export const ACCOUNT_DELETED_TEMPLATE = "account-deleted";

/** The reminder to confirm an address: case-backend sends its registration mail again, with a new link. */
export const REGISTRATION_TEMPLATE = "registration";

/** The notice that an account will be deleted for inactivity unless its owner signs in. */
export const ACCOUNT_INACTIVITY_TEMPLATE = "account-inactivity";

/** The confirmation that an account was deleted after the inactivity notice went unanswered. */
export const ACCOUNT_DELETED_AFTER_INACTIVITY_TEMPLATE = "account-deleted-after-inactivity";
