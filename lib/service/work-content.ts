/**
 * What a work report may say (seed 004 "What agents may put in a report"; issue 13 item 4): summaries,
 * subjects and wait reasons are short plain data for collaborators. Never a raw prompt, a command, a
 * credential or an absolute path. Each rule is a heuristic with a name; a refusal (422 `content_rule`)
 * names the field and the rule so the agent can say it again in plain words. docs/work.md lists them.
 */
import { redactText } from '../log/redact.js';
import { AppError } from './errors.js';

/** The rules, by name, with what a refusal tells the agent. */
export const CONTENT_RULES = {
  credential: 'it holds what looks like a credential',
  absolute_path: 'it holds an absolute path (name the file relative to the project)',
  command: 'it looks like a raw command (say what the command does instead)',
  prompt: 'it looks like a copied prompt or instruction (one line of what is being done instead)',
} as const;
export type ContentRule = keyof typeof CONTENT_RULES;

// A path from a file system root, a home folder or a drive, not a URL path or a `a/b` relative one.
const ABSOLUTE_PATH =
  /(?:^|[\s"'(=:,])(?:~\/|[A-Za-z]:\\|\/(?:home|Users|root|etc|var|tmp|usr|opt|mnt|srv|private|Volumes|workspace|proc|sys|dev|bin|sbin|lib|nix|run|snap|media|data|app|srv|boot)(?:\/|\b))/;
// Shell syntax, or a line that starts with a command and its arguments.
const SHELL =
  /&&|\|\||(?:^|\s)\|(?:\s|$)|;\s*\S|`|\$\(|(?:^|\s)>{1,2}\s*\S|(?:^|\s)--?[A-Za-z][\w-]*(?:=|\s|$)|^\$\s/;
const COMMAND_START =
  /^(?:sudo|npm|npx|yarn|pnpm|git|cd|ls|rm|cp|mv|curl|wget|python3?|node|make|docker|kubectl|cargo|go|pip3?|bash|sh|zsh|cat|echo|grep|sed|awk|chmod|chown|ssh|scp|tar|terraform|aws|gcloud|az)\s+\S/;
const PROMPT_START =
  /^(?:you are|you're an?|please\b|can you|could you|would you|i want you|i need you|act as|ignore (?:all|the|previous)|system:|user:|assistant:|<\/?[a-z_-]+>)/i;

/** The first rule `text` breaks, or null. */
export function brokenRule(text: string): ContentRule | null {
  if (redactText(text).hits.length > 0) return 'credential';
  // More than one line (any line terminator, U+2028 and U+2029 included) is a pasted text, not a summary.
  if (/[\r\n\v\f\u0085\u2028\u2029]/.test(text) || PROMPT_START.test(text.trim())) return 'prompt';
  if (ABSOLUTE_PATH.test(text)) return 'absolute_path';
  if (SHELL.test(text) || COMMAND_START.test(text.trim())) return 'command';
  return null;
}

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
