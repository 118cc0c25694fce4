/**
 * The service's refusal of a work report that breaks a content rule (seed 004 "What agents may put in a
 * report"; issue 13 item 4): the rules themselves are the contract's (lib/contract/content-rules.ts), so
 * a client can check what it sends by the same words.
 */
import { brokenRule, CONTENT_RULES } from '../../contract/content-rules.js';
import { AppError } from '../shared/errors.js';

/**
 * Checks each `[field, text]` (undefined skipped) against the rules.
 * @throws AppError `content_rule` (422) naming the field and the rule, with nothing stored
 */
export function requirePlainContent(fields: Array<[string, string | undefined]>): void {
  for (const [field, text] of fields) {
    if (text === undefined) continue;
    const rule = brokenRule(text);
    if (rule) {
      throw new AppError(
        'content_rule',
        `${field} was refused: ${CONTENT_RULES[rule]} (rule ${rule}, seed 004)`,
        {
          field,
          rule,
        },
      );
    }
  }
}
