/**
 * Redaction patterns for the forms people paste credentials in (issue 25 item 8), beside the provider
 * prefixes of redact-patterns.ts and gitleaks' rules: passwords under a label in env files, YAML, JSON,
 * Python/JS/Go/Ruby settings and code (`*_PASSWORD=…`, `password: …`, `"PASSWORD": "…"`, `Passwd: "…"`,
 * `*_PASS`, `*_PW`, passphrases), quoted values with punctuation under a key/token/secret label
 * (`SECRET_KEY = 'django-insecure-^k2#x@(…)'`), config-file shapes (XML tags, .NET `<add key value>`, PHP
 * `define`, .netrc, Docker's `"auth"`), command lines (`mysql -pX`, `--password X`, `sshpass -p`,
 * `redis-cli -a`, `curl -u user:X`), HTTP headers (`Authorization: <scheme> X`, session cookies) and a
 * few URL forms (Azure SAS `sig=`). Used by lib/log/redact/redact-patterns.ts (`BUILTIN_PATTERNS`), after the
 * specific rows so that a provider's name labels a match both find.
 *
 * Values that are not secrets but stand where one would are left alone through `reject`: variables and
 * code (`os.getenv(…)`, `settings.X`, `${{ secrets.X }}`, `{{ x }}`, `<%= … %>`, `$(…)`, `!Ref X`),
 * placeholders (`<your-password>`, `your-api-key-here`, `null`, `changeme`, `********`) and type names.
 */
import type { RedactPattern } from './redact-match.js';

/**
 * Labels ending in `key` that name ids, not credentials (`cacheKey`, `primary_key`, `sortKey`,
 * `publishable_key`): a lookbehind placed after the literal `key` (so the regex engine can search for the
 * literal first).
 */
export const NOT_SECRET_KEY =
  '(?<!(?:cache|sort|primary|partition|foreign|idempotency|public|publishable|row|hash|lookup|dedupe?|object|index|group|event|route|i18n|translation|react|s3)[_.-]?key)';

/** The end of a label and its operator: a closing quote or `]` (`['SECRET_KEY']`), then `=` `:` `:=` `=>`. */
const LABEL_END = `s?(?:["'\`]?\\]?)[ \\t]*(?::=|=>|[:=])[ \\t]*`;

/**
 * A password-like label: password, passwd, pwd, passphrase, and `pass` / `pw` / `psk` as a whole word or
 * after `_` `.` `-` (`DB_PASS`, `ansible_ssh_pass`, `LDAP_BIND_PW`, `WIFI_PSK`; not `bypass`, `compass`).
 */
const PW_LABEL = '(?:passw(?:or)?d|passphrase|pwd|(?:pass|pw|psk)(?<![A-Za-z0-9](?:pass|pw|psk)))';

/** Literal words one of which a password label contains (`PW_LABEL` and the characters after it). */
const PW_KEYWORDS = [
  'passw',
  'pwd',
  'passphrase',
  ...['pass', 'pw', 'psk'].flatMap((w) => [`_${w}`, `-${w}`, `.${w}`, `${w}:`, `${w}=`, `${w}"`, `${w}'`]),
];

/** Characters of an unquoted value: not space, quote, or a separator of the text around it. */
const BARE = `[^\\s"'\`,;&<>(){}\\[\\]]`;
/** After an unquoted value: a separator that is not a call's `(` or an index's `[` (then it was code). */
const BARE_END = `(?=[\\s"'\`,;&<>)}\\]]|$)`;
/** An unquoted value may not start as a reference, template, path, comment or YAML tag does. */
const NOT_REFERENCE = `(?![$%<{\\[(#/~*!@]|\\.{3})`;

/**
 * What stands where a secret would but is not one: a placeholder word, `your-…` / `…-here`, a run of one
 * character, a bare identifier without a digit (a variable, a type: `password=pwd`, `password: string`),
 * a dotted path (`settings.DB_PASSWORD`, `user?.password`, `process.env.PW!`).
 */
export const NOT_A_SECRET_VALUE = new RegExp(
  [
    '^(?:null|none|nil|undefined|true|false|yes|no|on|off|empty|required|optional|string|str|int|bool|number|object|any',
    'changeme|change[_-]?me|redacted|hidden|masked|secret|password|passwd|example|sample|placeholder|dummy|test|todo|tbd|xxx+|\\*+|•+|\\.+|…)$',
    '^your[_ -]',
    '[_ -]here$',
    '^[A-Za-z_]+!?$',
    '^[A-Za-z_]\\w*(?:[?!]?\\.[A-Za-z_]\\w*)+!?$',
    '^\\s|\\s$',
  ].join('|'),
  'i',
);
/** As `NOT_A_SECRET_VALUE` for a quoted literal: a literal word is a value, so only placeholders. */
const NOT_A_SECRET_LITERAL = new RegExp(
  [
    '^(?:null|none|nil|undefined|true|false|empty|required|optional|string|changeme|change[_-]?me|redacted|hidden|masked|password|example|placeholder|dummy|xxx+|\\*+|•+|\\.+|…)$',
    '^your[_ -]',
    '[_ -]here$',
    '^\\s|\\s$',
  ].join('|'),
  'i',
);

/** A command-line argument, quoted or not (no spaces): not a `$VAR`, `${…}`, `<…>` or `%…%`. */
const CLI_VALUE = `["'\`]?(?<secret>(?![$%<{])[^\\s'"\`]{3,256})`;

/** A quoted value: 4-256 characters up to the same quote (spaces and punctuation included), not a template. */
const quotedValue = (min: number, max: number) =>
  ['"', "'", '\\`'].map((q) => `${q}((?![$%<{])[^${q}\\n\\\\]{${min},${max}})${q}`).join('|');

export const FORM_PATTERNS: readonly RedactPattern[] = [
  {
    name: 'keyword_assignment',
    comment:
      'password/passwd/pwd/passphrase/_PASS/_PW/_PSK label, then = : := =>, then a quoted value (4-256 characters up to the same quote: punctuation and spaces included) or an unquoted one (6-256 up to a space or separator, with a digit or symbol: env files, YAML, properties, connection strings); not a reference ($X, a GitHub secrets expression, <…>, !Ref), a call or index (getenv(…), form[…]), a dotted path, a bare word, a placeholder or `********`.',
    regex: new RegExp(
      `${PW_LABEL}${LABEL_END}(?:${quotedValue(4, 256)}|(${NOT_REFERENCE}(?=${BARE}{0,255}[0-9!#$%^*+=?~@-])${BARE}{6,256})${BARE_END})`,
      'i',
    ),
    // The label words as they stand before an operator: so prose ("tests pass") does not run the regex.
    keywords: PW_KEYWORDS,
    secretGroup: 0,
    reject: NOT_A_SECRET_VALUE,
    entropy: 2,
  },
  {
    name: 'mnemonic',
    comment:
      'A wallet seed phrase under a mnemonic / seed phrase / recovery phrase label: 12-24 lower-case words.',
    regex: new RegExp(
      `(?:mnemonic|seed[_ -]?phrase|recovery[_ -]?phrase)${LABEL_END}["'\`]?(?<secret>(?:[a-z]{3,8} ){11,23}[a-z]{3,8})`,
      'i',
    ),
    keywords: ['mnemonic', 'seed', 'phrase'],
  },
  {
    name: 'keyword_assignment',
    comment:
      'An XML element named like a credential: <password>…</password>, <apiKey>…</apiKey>, <secret>…</secret>.',
    // The tag is read once, then checked from its end (a lookbehind): no backtracking over long names.
    regex: new RegExp(
      `<([\\w:.-]+)>(?<=(?:password|passwd|secret|token|api[_-]?key|private[_-]?key)>)(?<secret>${NOT_REFERENCE}[^<\\n]{4,512})</\\1>`,
      'i',
    ),
    keywords: ['password>', 'passwd>', 'secret>', 'token>', 'key>'],
    reject: NOT_A_SECRET_LITERAL,
    entropy: 2,
  },
  {
    name: 'keyword_assignment',
    comment:
      ".NET config: <add key=\"…Password|Secret|Token|ApiKey…\" value=\"…\"/>, the value; and PHP define('DB_PASSWORD' | 'AUTH_KEY', '…').",
    regex:
      /(?:<add\b[^>\n]*?\bkey=|\bdefine\(\s*)(["'])[\w.:-]*(?:password|passwd|pwd|secret|token|api[_-]?key|_key|_salt)[\w.:-]*\1(?:[^>\n]*?\bvalue=|\s*,\s*)(["'])(?<secret>(?![$%<{])(?:(?!\2)[^\n\\]){4,256})\2/i,
    keywords: ['<add ', 'define('],
    reject: NOT_A_SECRET_LITERAL,
    entropy: 2,
  },
  {
    name: 'netrc_password',
    comment: '.netrc: machine HOST login USER password SECRET (one line or several).',
    regex: /\bmachine[ \t]+\S+(?:\s+(?:login|account)[ \t]+\S+)*\s+password[ \t]+(?<secret>\S{3,})/,
    keywords: ['machine'],
  },
  {
    name: 'docker_auth',
    comment: 'Docker config.json: "auth": "<base64 of user:password>".',
    regex: /"auth"[ \t]*:[ \t]*"(?<secret>[A-Za-z0-9+/]{12,}={0,2})"/,
    keywords: ['"auth"'],
    entropy: 3,
  },
  {
    name: 'cli_password',
    comment:
      'A password on a command line: mysql/mysqldump/mysqladmin -pSECRET (no space: with one, mysql prompts); sshpass -p, docker/podman/az/helm login -p; redis-cli -a.',
    regex: new RegExp(
      `(?:\\bmysql(?:dump|admin)?\\b[^\\n|;&]*?[ \\t]-p(?=[^\\s])|\\b(?:sshpass|(?:docker|podman|buildah|az|helm(?:[ \\t]+registry)?)[ \\t]+login)\\b[^\\n|;&]*?[ \\t]-p[ \\t]*|\\bredis-cli\\b[^\\n|;&]*?[ \\t]-a[ \\t]+)${CLI_VALUE}`,
    ),
    keywords: ['mysql', 'sshpass', 'login', 'redis-cli'],
    entropy: 2,
    reject: NOT_A_SECRET_LITERAL,
  },
  {
    name: 'cli_password',
    comment:
      'A long option naming a credential: --password X, --password=X, --passwd, --pass, --db-password, --api-key, --token, --secret, --auth-token.',
    regex: new RegExp(
      `--(?<![\\w-]--)(?:[a-z]+-)?(?:password|passwd|pass|api-key|apikey|token|secret|auth-token|access-token)(?:=|[ \\t]+)${CLI_VALUE}`,
      'i',
    ),
    keywords: ['-pass', '-token', '-secret', '-api-key', '-apikey'],
    reject: NOT_A_SECRET_VALUE,
    entropy: 2,
  },
  {
    name: 'cli_password',
    comment:
      'openssl -k PASS / -pass|-passin|-passout pass:PASS (env: and file: are references, left alone); htpasswd -b FILE USER PASS.',
    regex: new RegExp(
      `(?:\\bopenssl\\b[^\\n|;&]*?[ \\t]-k[ \\t]+|[ \\t]-pass(?:in|out)?[ \\t]+pass:|\\bhtpasswd\\b(?:[ \\t]+-[a-zA-Z]+)*?[ \\t]+-[a-zA-Z]*b[a-zA-Z]*(?:[ \\t]+-[a-zA-Z]+)*[ \\t]+\\S+[ \\t]+\\S+[ \\t]+)${CLI_VALUE}`,
    ),
    keywords: ['openssl', '-pass', 'htpasswd'],
    reject: NOT_A_SECRET_LITERAL,
    entropy: 2,
  },
  {
    name: 'keyword_assignment',
    comment:
      'An environment variable given as name and value (Kubernetes env, ECS task definitions, Terraform, GitHub Actions): name: *_PASSWORD|*_SECRET|*_TOKEN|*_API_KEY, then value: … on the same or the next line.',
    regex: new RegExp(
      `name["']?[ \\t]*[:=][ \\t]*["']?[\\w.-]*(?:passw(?:or)?d|secret|token|api_?key|private_?key|credentials?)["']?[ \\t]*(?:,[ \\t]*|\\r?\\n[ \\t]*)["']?value["']?[ \\t]*[:=][ \\t]*["']?(?<secret>${NOT_REFERENCE}[^\\s"'\`,;&<>(){}\\[\\]]{4,512})`,
      'i',
    ),
    keywords: ['value'],
    reject: NOT_A_SECRET_VALUE,
    entropy: 2,
  },
  {
    name: 'cli_password',
    comment: 'curl -u / --user USER:PASSWORD: the password (curl prompts when there is no colon).',
    regex: /\bcurl\b[^\n|;&]*?[ \t](?:-u|--user)[ \t]*['"]?[^\s:'"]*:(?<secret>[^\s'"]{3,256})/,
    keywords: ['curl'],
  },
  {
    name: 'authorization',
    comment:
      'Authorization (and Proxy-Authorization) with a scheme other than Basic/Bearer (those have their rows): Token, Bot, SSWS, ApiKey, … then 16 or more token characters.',
    regex:
      /authorization["']?[ \t]*[:=][ \t]*["']?(?!(?:bearer|basic)[ \t])[A-Za-z][\w-]{1,20}[ \t]+(?<secret>[A-Za-z0-9._~+/=-]{16,})/i,
    keywords: ['authorization'],
    entropy: 3,
  },
  {
    name: 'session_cookie',
    comment:
      'A Cookie / Set-Cookie header: the first cookie named like a session or auth token (sessionid, connect.sid, _session, auth_token, jwt) with 16 or more characters.',
    regex:
      /\bcookie:[ \t]*(?:[^\n;]*;[ \t]*)*?[\w.-]*(?:sess|sid|auth|token|jwt)[\w.-]*=(?<secret>[^;\s"',]{16,})/i,
    keywords: ['cookie'],
    entropy: 3,
  },
  {
    name: 'azure_sas',
    comment: 'An Azure shared access signature in a URL: the sig= parameter (it grants what the URL names).',
    regex: /[?&]sig=(?<secret>[A-Za-z0-9%+/=]{20,})/,
    keywords: ['sig='],
  },
];
