/**
 * A message that no retry can deliver: nobody to send it to, or a payload its template cannot
 * render. The dispatcher fails such a row at once instead of spending its attempts.
 */
export class UndeliverableMessage extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UndeliverableMessage";
  }
}
