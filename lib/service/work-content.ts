/**
 * What a work report may say (seed 004 "What agents may put in a report"; issue 13 item 4): summaries,
 * subjects and wait reasons are short plain data for collaborators. Never a raw prompt, a command, a
 * credential or an absolute path. Each rule is a heuristic with a name; a refusal (422 `content_rule`)
 * names the field and the rule so the agent can say it again in plain words. docs/work.md lists them.
 */
import { redactText } from '../log/redact.js';
import { AppError } from './errors.js';
import { LINE_BREAK } from './status-schemas.js';

/** The rules, by name, with what a refusal tells the agent. */
export const CONTENT_RULES = {
  credential: 'it holds what looks like a credential',
  absolute_path: 'it holds an absolute path (name the file relative to the project)',
  command: 'it looks like a raw command (say what the command does instead)',
  prompt: 'it looks like a copied prompt or instruction (one line of what is being done instead)',
} as const;
export type ContentRule = keyof typeof CONTENT_RULES;

// A path from a file system root, a home folder or a drive, not a URL path or a `a/b` relative one:
// a well-known root (`/etc`, `/home/…`), or any `/a/b…` of two segments or more, where it starts a word
// (after a space, a quote, a bracket, `=`, `:` or `,`: a URL's path follows its host, so it is not one);
// `~/…`; a drive (`C:\…`, `C:/…`); a UNC path (`\\host\share`); a `file:` URL.
const ABSOLUTE_PATH = new RegExp(
  [
    String.raw`(?:^|[\s"'(\[<{=:,])(?:~\/|[A-Za-z]:[\\/]|\\\\[^\\\s]+\\` +
      String.raw`|\/(?:home|Users|root|etc|var|tmp|usr|opt|mnt|srv|private|Volumes|workspace|proc|sys|dev|bin|sbin|lib|nix|run|snap|media|data|app|boot|scratch|nfs)(?:\/|\b)` +
      String.raw`|\/[^\s/"'<>|]+\/[^\s/"'<>|])`,
    String.raw`\bfile:\/`,
  ].join('|'),
  'i',
);
// Shell syntax, or a line that starts with a command and its arguments.
const SHELL =
  /&&|\|\||(?:^|\s)\|(?:\s|$)|;\s*\S|`|\$\(|(?:^|\s)>{1,2}\s*\S|(?:^|\s)--?[A-Za-z][\w-]*(?:=|\s|$)|^\$\s/;
const COMMAND_START =
  /^(?:sudo|npm|npx|yarn|pnpm|git|cd|ls|rm|cp|mv|curl|wget|python3?|node|make|docker|kubectl|cargo|go|pip3?|bash|sh|zsh|cat|echo|grep|sed|awk|chmod|chown|ssh|scp|tar|terraform|aws|gcloud|az)\s+\S/;
const PROMPT_START =
  /^(?:you are|you're an?|please\b|can you|could you|would you|i want you|i need you|act as|ignore (?:all|the|previous)|system:|user:|assistant:|<\/?[a-z_-]+>)/i;

// Invisible format characters (Unicode Cf: zero-width space and joiners U+200B–U+200F, soft hyphen
// U+00AD, word joiner U+2060, BOM U+FEFF, bidi controls…): a reader does not see them, so a credential
// or a path with one inside reads (and copies) as the plain one. The rules look at the text without
// them, NFKC-normalized (fullwidth `ｇｈｐ＿` is `ghp_`); what is stored is the text as sent.
const FORMAT_CHARS = /\p{Cf}/gu;

/**
 * The text the rules look at: `text` without invisible format characters (Unicode Cf), NFKC-normalized.
 * Exported for tests.
 */
export function visibleText(text: string): string {
  return text.replace(FORMAT_CHARS, '').normalize('NFKC');
}

/** The first rule `text` breaks (judged on `visibleText(text)`), or null. */
export function brokenRule(sent: string): ContentRule | null {
  const text = visibleText(sent);
  if (redactText(text).hits.length > 0) return 'credential';
  // More than one line (any line terminator, U+2028 and U+2029 included) is a pasted text, not a summary.
  if (LINE_BREAK.test(text) || PROMPT_START.test(text.trim())) return 'prompt';
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
