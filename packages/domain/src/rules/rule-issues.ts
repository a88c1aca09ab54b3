import type { ValidationIssue } from "@studyflow/engine";
import { Invalid } from "../errors";

/** Issues named in one message by default; a rule set with many mistakes stays readable. */
const SHOWN_RULE_ISSUES = 5;

export interface RuleIssuesMessage {
  /** What was refused, leading the message ("invalid rules"); without it the issues stand alone. */
  subject?: string;
  /** At most this many issues are named. @defaultValue {@link SHOWN_RULE_ISSUES} */
  shown?: number;
  /**
   * Whether the issues past `shown` are counted as " (and N more)". The rule-set messages count
   * them; the single-expression messages (the file-upload rule) never have, and keep that wording.
   * @defaultValue true
   */
  countHidden?: boolean;
}

/**
 * The Invalid (400 on the API, a refusal in the CLI) for the engine validator's issues: each as
 * `path: message`, joined with "; ", so every caller names the JSON paths the same way.
 */
export function invalidRulesError(issues: readonly ValidationIssue[], message: RuleIssuesMessage = {}): Invalid {
  const { subject, shown = SHOWN_RULE_ISSUES, countHidden = true } = message;
  const named = issues.slice(0, shown).map((issue) => `${issue.path}: ${issue.message}`);
  const hidden = issues.length - named.length;
  const more = countHidden && hidden > 0 ? ` (and ${hidden} more)` : "";
  const list = `${named.join("; ")}${more}`;
  return new Invalid(subject === undefined ? list : `${subject}: ${list}`);
}
