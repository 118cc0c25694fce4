/**
 * Team sign-in's admin API from the client side (issue 29; docs/sign-in.md): a tenant's OIDC settings
 * (`/v1/tenants/{t}/oidc`), its people (`/v1/people`) and its audit list (`/v1/audit-log`), as
 * `hansard tenant oidc`, `hansard people` and `hansard audit-log` ask for them. Every call needs an admin
 * token bound to no session; the answers are the contract's shapes (lib/contract/sign-in.ts).
 *
 * @example
 *   const api = new SignInApi(clientFrom({}, process.env));
 *   const tenant = await api.ownTenant();
 *   const view = await api.setOidc(tenant, { issuer: 'https://accounts.google.com', client_id, client_secret });
 *   console.log(view.redirect_uri); // register it at the provider
 */
import type {
  AuditEntryView,
  OidcSettingsView,
  PersonRole,
  PersonView,
  Role,
} from '../../contract/sign-in.js';
import type { ApiClient } from './client.js';
import { ServerError } from './client.js';

/** What `setOidc` sends (the server defaults what is left out). */
export interface OidcSettingsRequest {
  issuer: string;
  client_id: string;
  client_secret: string;
  allowed_domains?: string[];
  groups_claim?: string;
  role_map?: Record<string, Role>;
  default_role?: Role | null;
}

/** What `setPerson` sends: at least one of the three. */
export interface PersonChange {
  link?: string[];
  unlink?: string[];
  role?: PersonRole | null;
}

/** The calls of the sign-in admin routes; each throws the client's `ServerError` / `NetworkError`. */
export class SignInApi {
  constructor(private readonly client: ApiClient) {}

  /**
   * The tenant of the client's token, from `GET /v1/tokens` (scope `admin`: every token listed is of the
   * caller's tenant, its own among them; `GET /v1/tokens/self` names no tenant on purpose).
   * @throws ServerError 502 `bad_answer` when the listing names no tenant
   */
  async ownTenant(): Promise<string> {
    const res = await this.client.request('GET', '/v1/tokens');
    const tenant = (res.body as { tokens?: { tenant?: unknown }[] } | null)?.tokens?.[0]?.tenant;
    if (typeof tenant !== 'string') {
      throw new ServerError(502, 'bad_answer', 'GET /v1/tokens named no tenant: is this a hansard server?');
    }
    return tenant;
  }

  /** `GET /v1/tenants/{tenant}/oidc`: the settings, or null when the tenant has none (404). */
  async getOidc(tenant: string): Promise<OidcSettingsView | null> {
    const res = await this.client.request('GET', oidcPath(tenant), { allow404: true });
    return res.status === 404 ? null : (res.body as OidcSettingsView);
  }

  /** `PUT /v1/tenants/{tenant}/oidc`: the settings as set; `check: false` skips the discovery fetch. */
  async setOidc(tenant: string, settings: OidcSettingsRequest, check = true): Promise<OidcSettingsView> {
    const res = await this.client.request(
      'PUT',
      `${oidcPath(tenant)}${check ? '' : '?check=0'}`,
      json(settings),
    );
    return res.body as OidcSettingsView;
  }

  /** `DELETE /v1/tenants/{tenant}/oidc`: true when removed, false when none was set (404). */
  async removeOidc(tenant: string): Promise<boolean> {
    const res = await this.client.request('DELETE', oidcPath(tenant), { allow404: true });
    return res.status !== 404;
  }

  /** `GET /v1/people?limit=&cursor=`: a page of people and the cursor of the next (null: last). */
  async listPeople(limit: number, cursor?: string): Promise<{ people: PersonView[]; next: string | null }> {
    const res = await this.client.request('GET', `/v1/people?${query(limit, cursor)}`);
    return res.body as { people: PersonView[]; next: string | null };
  }

  /** `GET /v1/people/{email}`: the person, or null when the tenant has none by that email (404). */
  async getPerson(email: string): Promise<PersonView | null> {
    const res = await this.client.request('GET', personPath(email), { allow404: true });
    return res.status === 404 ? null : (res.body as PersonView);
  }

  /** `PUT /v1/people/{email}`: the person after the change. */
  async setPerson(email: string, change: PersonChange): Promise<PersonView> {
    const res = await this.client.request('PUT', personPath(email), json(change));
    return res.body as PersonView;
  }

  /** `GET /v1/audit-log?limit=&cursor=`: a page of entries, newest first. */
  async listAudit(
    limit: number,
    cursor?: string,
  ): Promise<{ entries: AuditEntryView[]; next: string | null }> {
    const res = await this.client.request('GET', `/v1/audit-log?${query(limit, cursor)}`);
    return res.body as { entries: AuditEntryView[]; next: string | null };
  }
}

const oidcPath = (tenant: string) => `/v1/tenants/${encodeURIComponent(tenant)}/oidc`;
const personPath = (email: string) => `/v1/people/${encodeURIComponent(email)}`;

function query(limit: number, cursor?: string): string {
  return `limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
}

function json(body: unknown) {
  return { body: JSON.stringify(body), contentType: 'application/json' };
}
