/**
 * What team sign-in runs with (issue 29): the sealer of the tenants' client secrets and of the cookie
 * keys, and the deployment's settings. The local server (lib/deploy/local-serve.ts) and the AWS API
 * function (lib/deploy/aws.ts) build it; without it, OIDC sign-in answers 503 `sign_in_unavailable`
 * and link tokens still work.
 */
import type { Role } from '../../contract/sign-in.js';
import type { SecretSealer } from '../alerts/deps.js';

/** The deployment's sign-in settings. */
export interface SignInConfig {
  /**
   * the board's public origin (`https://board.example.com`): the redirect URI registered at providers is
   * `{origin}/login/oidc/callback`. null: the origin each request arrived at (a local server).
   */
  publicOrigin: string | null;
  /** how long a session lasts without a request, seconds (default 4 h) */
  idleSeconds: number;
  /** how long a session lasts at most from sign-in, seconds (default 12 h); then the provider is asked again */
  absoluteSeconds: number;
  /** a cookie older than this is re-issued at the next request (renewal), seconds (default 15 min) */
  renewAfterSeconds: number;
  /** how long a cookie key is current, seconds (default a day); the previous one is still accepted */
  keyPeriodSeconds: number;
  /**
   * issuers (and the endpoints their discovery names) may be loopback, link-local or private addresses:
   * a provider on this machine or this network. On for a local server (`hansard serve`); off on AWS, where
   * the server would otherwise fetch what a tenant's admin points it at inside the VPC or the Lambda
   * sandbox (SSRF), as alert targets are kept off them (lib/service/alerts/url-guard.ts).
   */
  allowPrivateIssuers: boolean;
}

export const DEFAULT_SIGN_IN_CONFIG: SignInConfig = {
  publicOrigin: null,
  idleSeconds: 4 * 3600,
  absoluteSeconds: 12 * 3600,
  renewAfterSeconds: 15 * 60,
  keyPeriodSeconds: 86_400,
  allowPrivateIssuers: true,
};

/**
 * The board's origin sign-in uses (the redirect URI is `{origin}/login/oidc/callback`): the deployment's
 * public origin when it sets one (behind a proxy or CloudFront the request's own origin is not the
 * browser's), else the request's; no trailing slash.
 */
export function boardOriginOf(
  config: Pick<SignInConfig, 'publicOrigin'> | null | undefined,
  requestOrigin: string,
): string {
  return (config?.publicOrigin ?? requestOrigin).replace(/\/+$/, '');
}

/** What the sign-in verbs need beyond the stores. */
export interface SignInServiceDeps {
  /**
   * seals the tenants' client secrets and the cookie keys; it must open what it sealed (on AWS a KMS key
   * of its own with Encrypt and Decrypt for the API function, unlike the alert targets' key)
   */
  sealer: SecretSealer;
  config: SignInConfig;
}

/**
 * The person a request is signed in as (a board session from OIDC), beside the token-shaped `caller` the
 * checks of scopes read. Absent on requests made with a token.
 */
export interface SignedInPerson {
  /** lower case */
  email: string;
  /** as the provider gave it, or null */
  name: string | null;
  role: Role;
  /** the person ids (`/people/{id}`) linked to them, then those the record shows with their email */
  user_ids: string[];
  /** the session's id: random, secret (inside the sealed cookie); keys the board's form tokens */
  sid: string;
}
