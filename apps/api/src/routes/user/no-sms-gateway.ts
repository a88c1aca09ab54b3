/*
 * The phone routes' one refusal. case-backend keeps a phone number as a contact and verifies it by
 * SMS; studyflow has no SMS gateway, so it cannot verify a number and keeps none. 409 ("not in a
 * state that allows this"), not a 5xx: nothing failed, and a participant app shows the message.
 */
export const NO_SMS_GATEWAY =
  "phone numbers are not supported: this studyflow deployment has no SMS gateway to verify them";
