/**
 * CASE's message types of the account lifecycle mails (case-backend's user-management job): the
 * instance's templates of these types render them, as case-backend's do.
 */

/** The reminder to confirm an address: case-backend sends its registration mail again, with a new link. */
export const REGISTRATION_TEMPLATE = "registration";

/** The notice that an account will be deleted for inactivity unless its owner signs in. */
export const ACCOUNT_INACTIVITY_TEMPLATE = "account-inactivity";

/** The confirmation that an account was deleted after the inactivity notice went unanswered. */
export const ACCOUNT_DELETED_AFTER_INACTIVITY_TEMPLATE = "account-deleted-after-inactivity";
