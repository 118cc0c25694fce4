/**
 * What a work report may say (seed 004 "What agents may put in a report"; issue 13 item 4): summaries,
 * subjects and wait reasons are short plain data for collaborators. Never a raw prompt, a command, a
 * credential or an absolute path. Each rule is a heuristic with a name; a refusal (422 `content_rule`)
 * names the field and the rule so the agent can say it again in plain words (the service's
 * `requirePlainContent`, lib/service/work/content.ts). docs/work.md lists them.
 *
 * The rules read the text as a person sees it (issue 24 item 4): `normalReadings` (lib/log/format/text-normal.ts)
 * drops invisible code points, NFKC-normalizes and folds UTS #39 look-alikes to ASCII, so `ghp_` with a
 * U+034F or U+16FE4 inside, `АKIA` with a Cyrillic А, `AKⵏA` with a Tifinagh ⵏ, `∕home∕` with U+2215 and
 * `Ⳇhome` with a Coptic Ⳇ are what they look like. A status
 * report's note and evidence refs are judged by the same rules (`brokenRule` with a subset,
 * lib/contract/status.ts).
 */

import { LINE_BREAK, normalReadings, visibleText } from '../log/format/text-normal.js';
import { redactText } from '../log/redact/redact.js';

/** The rules, by name, with what a refusal tells the agent. */
export const CONTENT_RULES = {
  credential: 'it holds what looks like a credential',
  absolute_path: 'it holds an absolute path (name the file relative to the project)',
  command: 'it looks like a raw command (say what the command does instead)',
  prompt: 'it looks like a copied prompt or instruction (one line of what is being done instead)',
} as const;
export type ContentRule = keyof typeof CONTENT_RULES;
/** The order the rules are tried in: the first broken one is named. */
const ALL_RULES: readonly ContentRule[] = ['credential', 'prompt', 'absolute_path', 'command'];

// A path from a file system root, a home folder or a drive, not a URL path or an `a/b` relative one. It
// starts a word: at the start, or after any character that cannot continue a relative path, URL or glob
// (a letter or digit of any script, `.`, `_`, `-`, `~`, `*`, `@`, `#`, `$`, `%`, `+`, a closing bracket,
// a slash): so after a space, a quote, `=`, `:`, but also `→`, `»`, `|`, `—` or `•`. Then: any `/a/b…`
// of two segments or more; `~/…`; a drive (`C:\…`, `C:/…`); a UNC path (`\\host\share`). A well-known
// root (`/home`, `/etc` …) after a letter of another script too (`編集中/home/…`: Japanese has no
// spaces). Also a `file:` URL, and `$HOME/…`, `%USERPROFILE%\…`.
const NOT_AFTER = String.raw`._~*@#$%+\-)\]}/\\`;
const ROOTS =
  'home|Users|root|etc|var|tmp|usr|opt|mnt|srv|private|Volumes|workspace|proc|sys|dev|bin|sbin|lib|nix|run|snap|media|data|app|boot|scratch|nfs';
const ABSOLUTE_PATH = new RegExp(
  [
    String.raw`(?:^|[^\p{L}\p{N}\p{M}${NOT_AFTER}])(?:~\/|[A-Za-z]:[\\/]|\\\\[^\\\s]+\\|\/[^\s/"'<>|]+\/[^\s/"'<>|])`,
    String.raw`(?:^|[^A-Za-z0-9${NOT_AFTER}])\/(?:${ROOTS})(?:\/|\b)`,
    String.raw`\bfile:\/`,
    String.raw`(?:\$\{?HOME\}?|%(?:USERPROFILE|HOMEPATH|APPDATA|LOCALAPPDATA)%)[\\/]`,
  ].join('|'),
  'iu',
);

// Command names that are not English words: one at the start of the text with anything after it is a
// command line (`ssh prod`, `npm test`). Lower case only: a summary's sentence case (`Git history …`,
// `Node 20 upgrade`) is prose.
const TOOLS = String.raw`sudo|npm|npx|yarn|pnpm|git|cd|ls|rm|cp|mv|curl|wget|python3?|node|make|docker|kubectl|cargo|go|pip3?|bash|sh|zsh|cat|echo|grep|sed|awk|chmod|chown|ssh|scp|tar|terraform|aws|gcloud|az|dd|mkfs(?:\.\w+)?|shred|rsync|ncat|socat|psql|mysql|sqlite3|openssl|base64|xargs|nohup|crontab|systemctl|apt(?:-get)?|brew|yum|dnf|pkill|killall|powershell|pwsh|iex|perl|php|deno|bun|tsx|helm|podman|mkdir|rmdir|chattr|iptables|umount|certutil|icacls`;
// Command names that are also English words (`find the leak`, `kill the dead code`): a command only with
// an argument after them.
const WORDS = 'find|kill|export|source|env|touch|mount|eval|exec|del|ln|nc|reboot|shutdown';
// What only an argument looks like: an option, `+x`, `key=value`, a path, a variable, a glob, `./x`.
const ARGUMENT = String.raw`(?:[-+]\S|\S*[=/\\$*~]|\.)`;
const SHELL = new RegExp(
  [
    String.raw`&&|\|\||(?:^|\s)\|(?:\s|$)|\$\(`,
    // a redirection: to a path, a file with an extension, or a descriptor (`> /dev/null`, `>>out.log`, `2>&1`)
    String.raw`>{1,2}\s*(?:&\d|[^\s<>]*\/|[\w-]+\.[A-Za-z])`,
    String.raw`(?:^|\s)--?[A-Za-z][\w-]*(?:=|\s|$)|^\$\s`,
    // a command after `;` or in backticks (an identifier in backticks is prose: `parseHeader`)
    String.raw`[;\x60]\s*(?:${TOOLS}|${WORDS})(?:\s|\x60|$)`,
    // a tool, or an English-word command, anywhere with an argument after it (`ran dd if=a of=b`)
    String.raw`(?:^|[\s"'(\[:])(?:${TOOLS}|${WORDS})\s+${ARGUMENT}`,
    // an environment assignment before a command (`NODE_ENV=production npm start`)
    String.raw`(?:^|\s)[A-Z_][A-Z0-9_]*=\S*\s+(?:${TOOLS})\b`,
    String.raw`\b(?:Invoke-(?:WebRequest|RestMethod|Expression|Command)|Start-Process|Remove-Item|Set-ExecutionPolicy|New-Object)\b`,
  ].join('|'),
);
const COMMAND_START = new RegExp(String.raw`^(?:${TOOLS})\s+\S`);

// A prompt: its opening words at the start of the text (or of a quoted part, or after a colon or a
// sentence's end), or an injection phrase anywhere. A request's polite opening (`please …`, `can you …`) or
// a tag at the start reads as a copied prompt in a work summary, which says what is being done; a status
// note may ask a collaborator (`please look`), so `brokenRule` takes `requests: false` for it.
const PROMPT_REQUEST =
  /^(?:please\b|can you|could you|would you|i need you|ignore (?:all|the|previous)|<\/?[a-z_-]+>)/i;
// "you are …" opens a prompt when it gives a role (issue 24.4; the trial of issue 24, item 11): an
// article, `now`, a name of a model or of a power. A quoted UI label ("you are here", "You are offline")
// says where or how someone is, not who to be.
const ROLE = String.raw`(?:an?|the|now|no\s+longer|my|our|to|going\s+to|acting|playing|in\s+\S+\s+mode|root|admin(?:istrator)?|superuser|sudo|unrestricted|uncensored|unfiltered|jailbroken|(?:chat)?gpt|claude|gemini|llama|dan|copilot)\b`;
// A role tag as chat formats and fine-tuning templates write it: `system:`, `[system]`, `### Instruction`.
const ROLE_NAME = 'system|assistant|user|human|developer';
const PROMPT_OPENING = new RegExp(
  String.raw`(?:^|["'«‹「『([]|[:.!?]\s)\s*(?:you(?:\s+are|'re)\s+${ROLE}|act as\b|pretend (?:to be|you are)\b|i want you\b|(?:${ROLE_NAME})\s*:|\[(?:${ROLE_NAME}|instructions?)\]|#+\s*(?:${ROLE_NAME}|instructions?|response)(?![\w-]))`,
  'i',
);
// An injection phrase: a verb of setting aside, then its object (issue 24.4; the trial's item 11: not
// "override the previous config", "ignore prior failures", "forget earlier state"): instructions,
// prompts, directives or directions, with any qualifier; rules, guidelines, messages, context and the
// like only as someone's (`your …`), earlier ones (`the previous …`) or given ones (`the rules you were
// given`); or `the above` / `everything before` standing alone (`disregard the above and …`, not `the
// above warning`).
const SET_ASIDE = String.raw`(?:ignore|disregard|forget|override|bypass|discard|pay\s+no\s+(?:attention|heed|mind)\s+to|take\s+no\s+notice\s+of|(?:do\s+not|don't|never)\s+(?:follow|obey|heed)|stop\s+(?:following|obeying)|set\s+aside|throw\s+(?:out|away))`;
const DETERMINER = '(?:all|any|the|my|these|those|every|each|of|both|whatever|everything|anything)';
const EARLIER =
  '(?:previous|prior|above|earlier|preceding|foregoing|original|initial|former|old|given|hidden|system|developer|safety)';
const INSTRUCTIONS = String.raw`(?:instructions?|prompts?|directives?|directions|system\s+(?:prompt|message)s?|guardrails|programming)`;
const ORDERS =
  '(?:rules|guidelines|messages|context|constraints|commands|orders|guidance|policies|restrictions|limitations|training)';
// A prompt named as a thing of the code (`the system prompt template`), not obeyed or set aside.
const NOT_A_THING = String.raw`(?!\s*[-_]?(?:templates?|files?|formats?|schemas?|builders?|loaders?|parsers?|editors?|tests?|fields?|configs?)\b)`;
const PROMPT_ANYWHERE = new RegExp(
  [
    String.raw`\b${SET_ASIDE}\s+(?:(?:${DETERMINER}|your|${EARLIER})\s+)*${INSTRUCTIONS}\b${NOT_A_THING}`,
    String.raw`\b${SET_ASIDE}\s+(?:${DETERMINER}\s+)*(?:your|${EARLIER})\s+(?:(?:${DETERMINER}|${EARLIER})\s+)*${ORDERS}\b`,
    String.raw`\b${SET_ASIDE}\s+(?:${DETERMINER}\s+)*(?:above|before|prior|previous|earlier|preceding|foregoing)\b(?!\s+(?!(?:and|then|or|but|instead|now|and\s+now)\b)\p{L})`,
    String.raw`\b${SET_ASIDE}\s+(?:everything|anything|all|what(?:ever)?|(?:${DETERMINER}\s+)*${ORDERS})\s+(?:(?:you|i)\s+(?:were|was|have\s+been|'ve\s+been|had\s+been|are)\s+)?(?:told|said|given|taught)\b`,
    String.raw`\b${EARLIER}\s+(?:instructions|prompts?|directives)\s+(?:are|is|were)\s+(?:void|cancell?ed|revoked|obsolete|invalid|null|no\s+longer)\b`,
    String.raw`\byou are now\b|\bfrom now on,?\s+(?:you|act|respond|answer)\b|\bnew (?:system )?instructions?\s*:`,
    String.raw`\b(?:reveal|print|show|repeat|output|leak)\s+(?:me\s+)?your\s+(?:system\s+|initial\s+|hidden\s+)?(?:prompt|instructions)\b`,
    String.raw`<\|[a-z_]+\|>|\[\/?INST\]|<<\/?SYS>>|<\/?(?:system|user|assistant|instructions?|prompt)>`,
    String.raw`#{2,}\s*(?:${ROLE_NAME}|instructions?|response|input)\s*:`,
  ].join('|'),
  'iu',
);

/**
 * The first rule of `rules` (default all, tried in the order credential, prompt, absolute path, command)
 * that `sent` breaks, or null. Each rule is tried on every reading of `sent` (`normalReadings`: invisible
 * code points dropped, NFKC, look-alikes folded, an `l` or `O` look-alike also as `I`/`O` and `1`/`0`, a
 * blank filler also as a space) and is broken when one of them breaks it; line breaks are looked for in
 * `visibleText(sent)` (folding makes U+2028 a space). `requests: false` lets a polite request through the
 * prompt rule (a status note).
 */
export function brokenRule(
  sent: string,
  rules: readonly ContentRule[] = ALL_RULES,
  { requests = true }: { requests?: boolean } = {},
): ContentRule | null {
  const readings = normalReadings(sent);
  const any = (test: (text: string, trimmed: string) => boolean) =>
    readings.some((text) => test(text, text.trim()));
  const broken: Record<ContentRule, () => boolean> = {
    credential: () => any((text) => redactText(text).hits.length > 0),
    // More than one line (any line terminator, U+2028 and U+2029 included) is a pasted text, not a summary.
    prompt: () =>
      LINE_BREAK.test(visibleText(sent)) ||
      any(
        (text, trimmed) =>
          (requests && PROMPT_REQUEST.test(trimmed)) ||
          PROMPT_OPENING.test(trimmed) ||
          PROMPT_ANYWHERE.test(text),
      ),
    absolute_path: () => any((text) => ABSOLUTE_PATH.test(text)),
    command: () => any((text, trimmed) => SHELL.test(text) || COMMAND_START.test(trimmed)),
  };
  return ALL_RULES.find((r) => rules.includes(r) && broken[r]()) ?? null;
}
