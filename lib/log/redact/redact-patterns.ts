/**
 * The built-in credential patterns of redaction (issue 3): one row per kind of secret, most specific first
 * (when two matches cover the same text, the earlier row names the placeholder). Each row has
 * `keywords` so text with none of them skips its regex. Used by `lib/log/redact/redact.ts`.
 */

import { FORM_PATTERNS, NOT_SECRET_KEY } from './redact-forms.js';
import { GITLEAKS_PATTERNS } from './redact-gitleaks.js';
import type { RedactPattern } from './redact-match.js';
import { PROVIDER_PATTERNS } from './redact-providers.js';

/** Not preceded by a token character: a token must start at a boundary, not inside an identifier. */
const L = '(?<![A-Za-z0-9_])';
const L_DASH = '(?<![A-Za-z0-9_-])';
/** Not followed by a token character: for fixed-length tokens, so a longer identifier is not taken. */
const R = '(?![A-Za-z0-9_])';
const R_DASH = '(?![A-Za-z0-9_-])';
/** A label and its `=` / `:` (also JSON's `"key": "`), e.g. `AWS_SECRET_ACCESS_KEY=` or `"authorization": "`. */
const ASSIGN = `["']?\\s*[:=]\\s*["']?`;
/** A PEM armour line (BEGIN or END) of any private-key kind: RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP … BLOCK. */
const pem = (edge: 'BEGIN' | 'END') => `-----${edge}[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----`;

/** A value after a credential-like label: 16–2048 characters (an AWS session token is ~700), with a letter and a digit, not a URL, a file path or `${VAR}`. */
const VALUE_CHAR = `[^\\s&@?"'\`,;<>(){}\\[\\]\\\\]`;
/** A file path with an extension (`src/a/b.tsx`): a value, not a secret. */
const PATH = `[\\w.-]*(?:/[\\w.-]+)+\\.[A-Za-z]{1,5}(?!${VALUE_CHAR})`;
const ASSIGNED = `((?![A-Za-z][A-Za-z0-9+.-]*://|[$%<]|${PATH})(?=${VALUE_CHAR}{0,2047}[0-9])(?=${VALUE_CHAR}{0,2047}[A-Za-z])${VALUE_CHAR}{16,2048})(?!${VALUE_CHAR})`;

/** A quoted value under a key-like label: no spaces, punctuation allowed, a letter and a digit or symbol. */
const QUOTED_KEY_CHARS = `(?![$%<{])(?=[^\\s"'\`\\\\]{0,2047}[0-9!#$%&()*+,;<=>?@^|~{}\\[\\]])(?=[^\\s"'\`\\\\]{0,2047}[A-Za-z])[^\\s"'\`\\\\]{16,2048}`;
const QUOTED_KEY_VALUE = `"(${QUOTED_KEY_CHARS})"|'(${QUOTED_KEY_CHARS})'|\`(${QUOTED_KEY_CHARS})\``;

/**
 * A credential-like label (`*_KEY`, `*_TOKEN`, `*_SECRET`, `password`, `credentials`, `api_key`) assigned
 * with `=`, `:`, `:=` or `=>`, in env files, JSON, YAML and code; the value must reach the entropy floor
 * (`entropy` below, tuned on test/fixtures/redaction: hashes and ids are not under such labels there).
 */
export const KEYWORD_ASSIGNMENT: RedactPattern = {
  name: 'keyword_assignment',
  comment:
    "label ending in key/token/secret/password/pwd/credential(s)/pat, key_base, key-data (not cacheKey, primary_key, publishable_key, public_token…), maybe closed by a quote or ] (config['SECRET_KEY']), then = : := =>, then a quoted value of 16-2048 characters without spaces, punctuation allowed (SECRET_KEY = 'django-insecure-^k2#…'), with a letter and a digit or symbol, or an unquoted one of 16-2048 with a letter and a digit (not a URL, a path or a $VAR reference); Shannon entropy >= 3 bits/char (32 random hex characters average ~3.8).",
  regex: new RegExp(
    `(?:key${NOT_SECRET_KEY}(?:[_-](?:base|data))?|token(?<!public[_.-]?token)|secret|passw(?:or)?d|pwd|credential|pat(?<![A-Za-z0-9]pat))s?(?:["'\`]?\\]?)[ \\t]*(?::=|=>|[:=])[ \\t]*(?:${QUOTED_KEY_VALUE}|["'\`]?${ASSIGNED})`,
    'i',
  ),
  keywords: ['key', 'token', 'secret', 'passw', 'pwd', 'credential', 'pat'],
  secretGroup: 0,
  entropy: 3,
};

/**
 * Our own rows (they name the placeholder when a gitleaks rule finds the same text), then the gitleaks
 * rules (`redact-gitleaks.ts`, generated), then the keyword assignment, the catch-all.
 */

/**
 * Our own credential patterns, most specific first: when two matches cover the same text, the
 * earlier row names the placeholder (`Bearer <jwt>` → `[REDACTED:jwt]`). Every row requires a known prefix
 * or a label, so ids (git shas, ULIDs, UUIDs) and ordinary words are never taken.
 */
export const OWN_PATTERNS: readonly RedactPattern[] = [
  {
    name: 'private_key',
    comment:
      'PEM private key block (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP): BEGIN through END (≤ 32 KiB, real or \\n-escaped newlines); with no END, the BEGIN line and the base64 lines after it.',
    // The body may not hold `-----` before END: that keeps a scan linear even over many BEGIN lines.
    regex: new RegExp(
      `${pem('BEGIN')}(?:(?:[^-]|-(?!----)){0,32768}${pem('END')}|(?:(?:\\r?\\n|\\\\r?\\\\n)[A-Za-z0-9+/=]+)*)`,
    ),
    keywords: ['private key'],
  },
  {
    name: 'aws_access_key',
    comment: 'AWS access key id: AKIA (long-term) or ASIA (STS) + 16 upper-case letters/digits.',
    regex: /(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])/,
    keywords: ['akia', 'asia'],
  },
  {
    name: 'github_token',
    comment: 'Classic/OAuth/user/server/refresh tokens: ghp_ gho_ ghu_ ghs_ ghr_ + 36 or more base62.',
    regex: new RegExp(`${L}gh[pousr]_[A-Za-z0-9]{36,}`),
    keywords: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'],
  },
  {
    name: 'github_pat',
    comment:
      'Fine-grained personal access token: github_pat_ + 22 base62 + _ + 59 base62 (accept 22 or more).',
    regex: new RegExp(`${L}github_pat_[A-Za-z0-9_]{22,}`),
    keywords: ['github_pat_'],
  },
  {
    name: 'gitlab_token',
    comment: 'GitLab personal access token: glpat- + 20 or more.',
    regex: new RegExp(`${L_DASH}glpat-[A-Za-z0-9_-]{20,}`),
    keywords: ['glpat-'],
  },
  {
    name: 'slack_token',
    comment:
      'Slack tokens xoxb-/xoxa-/xoxp-/xoxr-/xoxs- + 10 or more, with a digit (team and user ids are numeric).',
    regex: new RegExp(`${L_DASH}xox[baprs]-(?=[A-Za-z-]*[0-9])[A-Za-z0-9-]{10,}`),
    keywords: ['xoxb-', 'xoxa-', 'xoxp-', 'xoxr-', 'xoxs-'],
  },
  {
    name: 'stripe_key',
    comment: 'Stripe live secret and restricted keys: sk_live_ / rk_live_ + 20 or more base62.',
    regex: new RegExp(`${L}[sr]k_live_[A-Za-z0-9]{20,}`),
    keywords: ['sk_live_', 'rk_live_'],
  },
  {
    name: 'google_api_key',
    comment: 'Google API key: AIza + exactly 35 of base64url.',
    regex: new RegExp(`${L_DASH}AIza[A-Za-z0-9_-]{35}${R_DASH}`),
    keywords: ['aiza'],
  },
  {
    name: 'anthropic_key',
    comment: 'Anthropic API/admin keys: sk-ant- + 32 or more (real ones: sk-ant-api03-… ~100 characters).',
    regex: new RegExp(`${L_DASH}sk-ant-[A-Za-z0-9_-]{32,}`),
    keywords: ['sk-ant-'],
  },
  {
    name: 'openai_key',
    comment:
      'OpenAI: sk-proj-/sk-svcacct-/sk-admin-/sk-None- + 40 or more, or legacy sk- + 32 or more base62 with a digit (so not kebab-case words).',
    regex: new RegExp(
      `${L_DASH}sk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{40,}|(?=[A-Za-z]*[0-9])[A-Za-z0-9]{32,}${R_DASH})`,
    ),
    keywords: ['sk-'],
  },
  {
    name: 'huggingface_token',
    comment:
      'Hugging Face user access token: hf_ + 30 or more letters/digits, mixed case (random, not a word).',
    regex: new RegExp(`${L}hf_(?=[a-z0-9]*[A-Z])(?=[A-Z0-9]*[a-z])[A-Za-z0-9]{30,}${R}`),
    keywords: ['hf_'],
  },
  {
    name: 'npm_token',
    comment: 'npm access token: npm_ + exactly 36 base62.',
    regex: new RegExp(`${L}npm_[A-Za-z0-9]{36}${R}`),
    keywords: ['npm_'],
  },
  {
    name: 'hansard_token',
    comment: 'Our own API tokens (lib/service/tokens/create.ts): hns_ + exactly 43 base62.',
    regex: new RegExp(`${L}hns_[A-Za-z0-9]{43}${R}`),
    keywords: ['hns_'],
  },
  {
    name: 'docker_pat',
    comment:
      'Docker Hub personal/organisation access token: dckr_pat_ / dckr_oat_ + 27 or more (gitleaks has none).',
    regex: new RegExp(`${L}dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,}${R_DASH}`),
    keywords: ['dckr_'],
  },
  {
    name: 'tavily_key',
    comment: 'Tavily API key: tvly- (optionally dev-/prod-) + 20 or more base62 (gitleaks has no rule).',
    regex: new RegExp(`${L_DASH}tvly-(?:dev-|prod-)?[A-Za-z0-9]{20,}${R_DASH}`),
    keywords: ['tvly-'],
  },
  {
    name: 'jwt',
    comment:
      'JSON Web Token: header and payload are base64url JSON objects (so both start eyJ), then a signature.',
    regex: new RegExp(`${L_DASH}eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}`),
    keywords: ['eyj'],
  },
  {
    name: 'aws_secret_key',
    comment:
      'AWS secret access key, only when labelled (aws_secret_access_key = …, JSON, env, or `aws configure set aws_secret_access_key …`): 40 base64 characters alone could be any hash.',
    regex: new RegExp(
      `aws[_-]?secret[_-]?access[_-]?key(?:${ASSIGN}|[ \\t]+)(?<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])`,
      'i',
    ),
    keywords: ['secret'],
  },
  {
    name: 'bearer_token',
    comment:
      '`Authorization: Bearer <token>` (header, curl -H, JSON "authorization": "Bearer …"): any token.',
    regex: new RegExp(`authorization${ASSIGN}bearer[ \\t]+(?<secret>[A-Za-z0-9._~+/-]+=*)`, 'i'),
    keywords: ['bearer'],
  },
  {
    name: 'bearer_token',
    comment:
      'A bare `bearer <token>`: 16 or more token characters with a digit, so "the bearer of bad news" stays.',
    regex: new RegExp(
      `${L}bearer[ \\t]+(?<secret>(?=[A-Za-z._~+/-]*[0-9])[A-Za-z0-9._~+/-]{16,}=*)(?![A-Za-z0-9._~+/=-])`,
      'i',
    ),
    keywords: ['bearer'],
  },
  {
    name: 'basic_auth',
    comment: '`Authorization: Basic <base64 user:password>`: the credentials part.',
    regex: new RegExp(`authorization${ASSIGN}basic[ \\t]+(?<secret>[A-Za-z0-9+/]{4,}=*)`, 'i'),
    keywords: ['authorization'],
  },
  {
    name: 'url_password',
    comment:
      "A password in a URL's userinfo, scheme://user:password@host, the user possibly empty (redis://:password@host): only the password.",
    regex: /(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s:/?#@"'<>]*:(?<secret>[^\s/?#@"'<>]+)@/,
    keywords: ['://'],
  },
];

/**
 * Every built-in pattern, in precedence order: ours, the provider prefixes gitleaks lacks
 * (redact-providers.ts), gitleaks', the forms people paste (redact-forms.ts), then `KEYWORD_ASSIGNMENT`.
 */
export const BUILTIN_PATTERNS: readonly RedactPattern[] = [
  ...OWN_PATTERNS,
  ...PROVIDER_PATTERNS,
  ...GITLEAKS_PATTERNS,
  ...FORM_PATTERNS,
  KEYWORD_ASSIGNMENT,
];
