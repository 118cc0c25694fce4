/**
 * Provider keys that gitleaks' rules (redact-gitleaks.ts) find only beside the provider's name, or not at
 * all, but that people paste bare (issue 25 item 8): short prefixes (Mailgun `key-`, Telegram bot tokens
 * `digits:AA…`, Discord bot tokens and webhooks) and the newer prefixed keys of AI, hosting and developer
 * services. Each row needs its prefix at a token boundary and the vendor's length and alphabet; rows that
 * could be an identifier also need a digit. Used by lib/log/redact/redact-patterns.ts (`BUILTIN_PATTERNS`).
 */
import type { RedactPattern } from './redact-match.js';

/** Not followed by a token character: the vendor's length is the whole token. */
const R = '(?![A-Za-z0-9_-])';
/** The token (after the prefix) has a digit: so an identifier of the same shape is not taken. */
const DIGIT = (cls: string, max: number) => `(?=${cls}{0,${max}}[0-9])`;

const esc = (t: string) => t.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** One prefixed key: `prefix` (literal, matched case-sensitively) then `body` (a regex source). */
const prefixed = (name: string, prefix: string, body: string, comment: string): RedactPattern => ({
  name,
  comment,
  // The literal first and the boundary as a lookbehind after it: the engine searches for the literal.
  regex: new RegExp(`${esc(prefix)}(?<![A-Za-z0-9_-]${esc(prefix)})${body}${R}`),
  keywords: [prefix.toLowerCase()],
});

export const PROVIDER_PATTERNS: readonly RedactPattern[] = [
  prefixed(
    'mailgun_key',
    'key-',
    `${DIGIT('[0-9a-z]', 31)}[0-9a-z]{32}`,
    'Mailgun private API key: key- + 32 lower-case letters/digits (pubkey- is the public one).',
  ),
  {
    name: 'telegram_bot_token',
    comment:
      'Telegram bot token: the bot id (8-10 digits), :, then AA + 32-33 of base64url; also right after /bot in an API URL.',
    regex: /(?:(?<![A-Za-z0-9_])|(?<=\/bot))[0-9]{8,10}:AA[A-Za-z0-9_-]{32,33}(?![A-Za-z0-9_-])/,
    keywords: [':aa'],
  },
  {
    name: 'discord_bot_token',
    comment:
      'Discord bot token: base64 of the bot id (M, N or O + 23-27), a 6-character timestamp, a 27-40 character HMAC, dot-separated; only in text that names discord or calls .login( / .run( (discord.js, discord.py).',
    regex:
      /(?<![A-Za-z0-9_-])[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])/,
    keywords: ['discord', '.login(', '.run('],
    entropy: 3.5,
  },
  {
    name: 'discord_webhook',
    comment: 'Discord webhook URL: /api/webhooks/<id>/<token>: the token.',
    regex: /discord(?:app)?\.com\/api\/webhooks\/[0-9]{17,20}\/(?<secret>[A-Za-z0-9_-]{60,72})/,
    keywords: ['discord'],
  },
  {
    name: 'office_webhook',
    comment:
      'Microsoft Teams / Office 365 incoming webhook URL (outlook.office.com/webhook/…, *.webhook.office.com/webhookb2/…): the path that grants posting.',
    regex:
      /(?:outlook\.office(?:365)?\.com|\.webhook\.office\.com)\/webhook(?:b2)?\/(?<secret>[^\s"'<>]{40,})/,
    keywords: ['webhook'],
  },
  prefixed(
    'stripe_webhook_secret',
    'whsec_',
    '[A-Za-z0-9+/=]{32,}',
    'Stripe webhook signing secret: whsec_ + 32 or more.',
  ),
  prefixed('supabase_token', 'sbp_', '[0-9a-f]{40}', 'Supabase personal access token: sbp_ + 40 hex.'),
  prefixed(
    'supabase_token',
    'sb_secret_',
    '[A-Za-z0-9_-]{20,}',
    'Supabase secret API key: sb_secret_ + 20 or more.',
  ),
  prefixed('netlify_token', 'nfp_', '[A-Za-z0-9]{36,}', 'Netlify personal access token: nfp_ + 36 or more.'),
  prefixed(
    'render_key',
    'rnd_',
    `${DIGIT('[A-Za-z]', 31)}[A-Za-z0-9]{32,}`,
    'Render API key: rnd_ + 32 or more, with a digit.',
  ),
  prefixed(
    'notion_token',
    'ntn_',
    '[A-Za-z0-9]{40,}',
    'Notion integration token (2024-): ntn_ + 40 or more.',
  ),
  prefixed(
    'notion_token',
    'secret_',
    `(?=[A-Za-z0-9]{0,42}[0-9])(?=[a-z0-9]{0,42}[A-Z])[A-Za-z0-9]{43}`,
    'Notion integration token (before 2024): secret_ + exactly 43 mixed-case letters and digits.',
  ),
  prefixed(
    'airtable_pat',
    'pat',
    '[A-Za-z0-9]{14}\\.[0-9a-f]{64}',
    'Airtable personal access token: pat + 14 + . + 64 hex.',
  ),
  prefixed('figma_token', 'figd_', '[A-Za-z0-9_-]{40,}', 'Figma personal access token: figd_ + 40 or more.'),
  prefixed(
    'replicate_token',
    'r8_',
    `${DIGIT('[A-Za-z]', 36)}[A-Za-z0-9]{37}`,
    'Replicate API token: r8_ + 37.',
  ),
  prefixed('xai_key', 'xai-', '[A-Za-z0-9]{70,}', 'xAI API key: xai- + 70 or more.'),
  prefixed('elevenlabs_key', 'sk_', '[0-9a-f]{48}', 'ElevenLabs API key: sk_ + 48 hex.'),
  prefixed(
    'langsmith_key',
    'lsv2_',
    '(?:pt|sk)_[0-9a-f]{32}_[0-9a-f]{10}',
    'LangSmith API key: lsv2_pt_/lsv2_sk_ + 32 hex + _ + 10 hex.',
  ),
  prefixed(
    'pinecone_key',
    'pcsk_',
    '[A-Za-z0-9]{5,6}_[A-Za-z0-9]{40,}',
    'Pinecone API key: pcsk_ + 5-6 + _ + 40 or more.',
  ),
  prefixed(
    'cerebras_key',
    'csk-',
    '[a-z0-9]{40,}',
    'Cerebras API key: csk- + 40 or more lower-case letters/digits.',
  ),
  prefixed(
    'fireworks_key',
    'fw_',
    `${DIGIT('[A-Za-z]', 23)}[A-Za-z0-9]{24,}`,
    'Fireworks AI API key: fw_ + 24 or more, with a digit.',
  ),
  prefixed('perplexity_key', 'pplx-', '[A-Za-z0-9]{40,}', 'Perplexity API key: pplx- + 40 or more.'),
  prefixed(
    'mapbox_secret_token',
    'sk.eyJ',
    '[A-Za-z0-9_-]{20,}\\.[A-Za-z0-9_-]{20,}',
    'Mapbox secret token: sk.eyJ… (pk. tokens are public).',
  ),
  prefixed(
    'bitbucket_app_password',
    'ATBB',
    '[A-Za-z0-9]{32,}',
    'Bitbucket app password: ATBB + 32 or more.',
  ),
  {
    name: 'sonarqube_token',
    comment: 'SonarQube token: sqp_ (project), squ_ (user), sqa_ (global analysis) + 40 hex.',
    regex: new RegExp(`sq[pua]_(?<![A-Za-z0-9_-]sq[pua]_)[0-9a-f]{40}${R}`),
    keywords: ['sqp_', 'squ_', 'sqa_'],
  },
  {
    name: 'gitlab_token',
    comment:
      'GitLab runner, deploy, trigger, OAuth-app and other tokens: glrt- gldt- glptt- glsoat- glcbt- glimt- glft- glagent- + 20 or more.',
    regex: /gl(?:rt|dt|ptt|soat|cbt|imt|ft|agent)-(?<![A-Za-z0-9_-]gl[a-z]{2,5}-)[A-Za-z0-9_-]{20,}/,
    keywords: ['glrt-', 'gldt-', 'glptt-', 'glsoat-', 'glcbt-', 'glimt-', 'glft-', 'glagent-'],
  },
  {
    name: 'putty_private_key',
    comment: 'PuTTY private key file: from the header through the Private-Lines block.',
    regex: /PuTTY-User-Key-File-\d+:[^\n]*(?:\n[^\n]*){0,40}?\nPrivate-Lines: \d+(?:\n[A-Za-z0-9+/=]+)+/,
    keywords: ['putty-user-key-file'],
  },
];
