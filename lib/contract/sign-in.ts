/**
 * Team sign-in (issue 29): OpenID Connect per tenant, roles, people linked to their sign-in identity, and
 * the audit list of what people and tokens did. The shapes both sides of `/v1/tenants/{t}/oidc`,
 * `/v1/people` and `/v1/audit-log` use; how sign-in works is lib/service/sign-in/ and docs/sign-in.md.
 */
import { z } from 'zod';
import { Instant } from './ids.js';
import type { Scope } from './scopes.js';

/** The roles a signed-in person can have, least first. */
export const ROLES = ['viewer', 'member', 'admin'] as const;
export type Role = (typeof ROLES)[number];
export const RoleSchema = z.enum(ROLES);

/**
 * What each role may do, as the token scopes that exist (issue 29 item 2): a viewer reads (the board and
 * the API's reads), a member also reports and holds work, an admin also manages tokens, tenants and
 * alerts. No role carries `ingest`: segments come from the CLI's tokens, not from a browser.
 */
export const ROLE_SCOPES: Readonly<Record<Role, readonly Scope[]>> = {
  viewer: ['board', 'read'],
  member: ['board', 'read', 'report'],
  admin: ['board', 'read', 'report', 'admin'],
};

/** The higher of two roles (`ROLES` order). */
export function higherRole(a: Role | null, b: Role | null): Role | null {
  if (a === null) return b;
  if (b === null) return a;
  return ROLES.indexOf(a) >= ROLES.indexOf(b) ? a : b;
}

/**
 * A person's own role as an admin set it (`hansard people role EMAIL ROLE`): one of `ROLES`, or `none`
 * (refused whatever their groups say: how a person is removed). Absent (null on the record): what the
 * tenant's role map gives them.
 */
export const PERSON_ROLES = [...ROLES, 'none'] as const;
export const PersonRoleSchema = z.enum(PERSON_ROLES);
export type PersonRole = z.infer<typeof PersonRoleSchema>;

/** Most domains `allowed_domains` holds. */
export const MAX_ALLOWED_DOMAINS = 50;
/** Most groups a role map names. */
export const MAX_ROLE_MAP = 100;
/** Longest group name in a role map, in characters. */
export const MAX_GROUP_CHARS = 256;
/** Most person ids (`user_id`s as recorded) one identity is linked to. */
export const MAX_LINKED_IDS = 20;
/** Longest email address kept, in characters (RFC 5321's path limit). */
export const MAX_EMAIL_CHARS = 254;

/** A DNS domain name, lower case (`example.com`): what `allowed_domains` holds. */
export const DomainName = z
  .string()
  .min(1)
  .max(253)
  .regex(
    /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/,
    'a domain name such as example.com (lower case, no scheme, no @)',
  );

/**
 * An email address as an identity key: trimmed and lower-cased by the service before it is stored or
 * compared (`normalEmail`), one `@`, no spaces.
 */
export const EmailAddress = z
  .string()
  .min(3)
  .max(MAX_EMAIL_CHARS)
  // Printable ASCII only: an identity key must have one spelling. A look-alike (Cyrillic а, the Kelvin
  // sign that lower-cases to k) would be another person who reads the same, or fold into someone else.
  .regex(
    /^[\x21-\x3f\x41-\x7e]+@[\x21-\x3f\x41-\x7e]+$/,
    'an email address such as priya@example.com (printable ASCII, one @; an international domain in its xn-- form)',
  );

/** `email` as it is stored and compared: trimmed, lower case. */
export function normalEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * A person id as the record has it (a writer's `user_id`, the board's `/people/{user_id}`): any text but
 * control or invisible characters, no space at either end (what an admin links is what the record shows).
 */
export const PersonId = z
  .string()
  .min(1)
  .max(200)
  .regex(
    /^(?!\s)[^\p{Cc}\p{Cf}]*[^\p{Cc}\p{Cf}\s]$/u,
    'a person id: no control or invisible characters, no space at either end',
  );

/** The issuer URL: https, or http on a loopback host (a provider on this machine, tests). */
export const IssuerUrl = z
  .string()
  .max(512)
  .url({ error: 'the issuer must be an https:// URL such as https://accounts.google.com' })
  .refine((s) => {
    // zod runs the refines after a failed `.url()` too: that one said it; these only judge a URL.
    if (!URL.canParse(s)) return true;
    const u = new URL(s);
    if (u.search || u.hash || u.username || u.password) return false;
    if (u.protocol === 'https:') return true;
    return u.protocol === 'http:' && isLoopbackHost(u.hostname);
  }, 'the issuer must be an https:// URL without user name, query or fragment (http:// only on a loopback host)')
  .refine(
    (s) => !URL.canParse(s) || !new URL(s).pathname.includes('/.well-known/'),
    'give the issuer itself, not its discovery document: hansard adds /.well-known/openid-configuration',
  )
  .refine((s) => !URL.canParse(s) || !isMultiTenantEntra(new URL(s)), {
    message:
      "Microsoft's common, organizations and consumers issuers accept any directory's accounts: give your own directory's, https://login.microsoftonline.com/<directory id>/v2.0",
  });

/**
 * Whether `u` is one of Entra ID's multi-tenant issuers, whose ID tokens any directory's accounts get
 * (with an email claim their directory chose: the "nOAuth" impersonation).
 */
export function isMultiTenantEntra(u: URL): boolean {
  const host = u.hostname.toLowerCase();
  if (host !== 'login.microsoftonline.com' && host !== 'login.microsoft.com') return false;
  const first = u.pathname.split('/')[1]?.toLowerCase() ?? '';
  return first === 'common' || first === 'organizations' || first === 'consumers';
}

/** Whether `hostname` (as `URL.hostname` gives it) is this machine: localhost, 127.0.0.0/8 or ::1. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase();
  return h === 'localhost' || h === '[::1]' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

/**
 * `PUT /v1/tenants/{t}/oidc` and `hansard tenant oidc set` (issue 29 item 1): the tenant's provider and how
 * its people get roles. The secret is sealed before it is stored and never shown again.
 */
export const OidcSettingsInput = z.strictObject({
  issuer: IssuerUrl.describe(
    'the provider’s issuer URL: its discovery document is {issuer}/.well-known/openid-configuration',
  ),
  client_id: z.string().min(1).max(256),
  client_secret: z.string().min(1).max(4096).describe('write-only: sealed when stored, never returned'),
  allowed_domains: z
    .array(DomainName)
    .max(MAX_ALLOWED_DOMAINS)
    .default([])
    .describe('only people whose verified email is at one of these domains may sign in; empty: any'),
  groups_claim: z
    .string()
    .min(1)
    .max(128)
    .default('groups')
    .describe('the ID token or userinfo claim that lists the person’s groups'),
  role_map: z
    .record(z.string().min(1).max(MAX_GROUP_CHARS), RoleSchema)
    .default({})
    .refine((m) => Object.keys(m).length <= MAX_ROLE_MAP, `at most ${MAX_ROLE_MAP} groups`)
    .describe('group → role; a person in several groups gets the highest role'),
  default_role: RoleSchema.nullable()
    .default(null)
    .describe('the role of a person no group maps (null: refused until an admin gives them a role)'),
});
export type OidcSettingsInput = z.infer<typeof OidcSettingsInput>;

/** A tenant's sign-in settings as the API shows them: never the secret. */
export const OidcSettingsView = OidcSettingsInput.omit({ client_secret: true }).extend({
  tenant: z.string(),
  /** the address to register at the provider as the client's redirect (sign-in callback) URI */
  redirect_uri: z.string(),
  /** the address to register as the post-logout redirect URI */
  post_logout_redirect_uri: z.string(),
  updated_at: Instant,
  /** who set them: `person:{email}` or `token:{id}` */
  updated_by: z.string(),
});
export type OidcSettingsView = z.infer<typeof OidcSettingsView>;

/** `PUT /v1/people/{email}`: link an identity to person ids and/or set its own role. */
export const PersonInput = z
  .strictObject({
    /** person ids to link (added to those linked; `unlink` removes) */
    link: z.array(PersonId).max(MAX_LINKED_IDS).optional(),
    unlink: z.array(PersonId).max(MAX_LINKED_IDS).optional(),
    /** the person's own role; null: back to what the role map gives */
    role: PersonRoleSchema.nullable().optional(),
  })
  .refine((p) => p.link !== undefined || p.unlink !== undefined || p.role !== undefined, {
    message: 'say what to change: link, unlink or role',
  });
export type PersonInput = z.infer<typeof PersonInput>;

/** A person (a sign-in identity of the tenant) as the API shows them. */
export const PersonView = z.object({
  email: EmailAddress,
  /** their own role (`none`: refused); null: from the role map */
  role: PersonRoleSchema.nullable(),
  /** the person ids (`/people/{id}`) of the record an admin linked to them */
  user_ids: z.array(PersonId),
  /**
   * person ids the record shows writing with this email (the capture hook records a person's git
   * `user.email` when they consent): what "my sessions" also shows. A writer's own claim, so it never
   * grants anything: it only chooses which sessions the person's own view lists first.
   */
  seen_user_ids: z.array(PersonId).max(MAX_LINKED_IDS).default([]),
  /** their display name as the provider last gave it, or null */
  name: z.string().nullable(),
  /** when they last signed in (ISO 8601), or null: never */
  last_sign_in_at: Instant.nullable(),
  updated_at: Instant,
  updated_by: z.string(),
});
export type PersonView = z.infer<typeof PersonView>;

/** What an audit entry records: the board's and the admin API's actions. */
export const AUDIT_ACTIONS = [
  'alert.add',
  'alert.remove',
  'alert.rotate',
  'alert.test',
  'token.create',
  'token.revoke',
  'oidc.set',
  'oidc.remove',
  'person.set',
  'sign-in.refused',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Who did it: a signed-in person (their email) or a token (its id). */
export const AuditActor = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('person'), email: EmailAddress }),
  z.object({ kind: z.literal('token'), token_id: z.string() }),
]);
export type AuditActor = z.infer<typeof AuditActor>;

/** One entry of a tenant's audit list (`GET /v1/audit-log`, the board's /audit page). */
export const AuditEntryView = z.object({
  /** `au_` + a ULID: its time order */
  id: z.string().regex(/^au_[0-9A-HJKMNP-TV-Z]{26}$/),
  at: Instant,
  actor: AuditActor,
  action: z.enum(AUDIT_ACTIONS),
  /** what it acted on: a target id, a token id, an email; '' for the tenant itself */
  target: z.string().max(400),
  /** a short plain line (no secrets): what changed */
  detail: z.string().max(400).nullable(),
  /** `board` (a form of the board) or `api` */
  via: z.enum(['board', 'api']),
});
export type AuditEntryView = z.infer<typeof AuditEntryView>;

/** How long an audit entry is kept: 400 days (a year and a review). */
export const AUDIT_RETENTION_DAYS = 400;
