/**
 * `/v1/alerts` from the client side (issue 28 item 2; docs/alerts.md): a tenant's alert targets and their
 * deliveries, as `hansard alerts` asks for them. Every call needs an admin token; the answers are the
 * contract's shapes (lib/contract/alerts.ts), read as the server sends them.
 *
 * @example
 *   const alerts = new AlertsApi(clientFrom({}, process.env));
 *   const created = await alerts.add({ url: 'https://hooks.example.com/hansard', events: ['session.blocked'] });
 *   console.log(created.secret); // whsec_…: shown this once
 */
import type {
  AlertDeliveryView,
  AlertFormat,
  AlertKind,
  AlertTargetCreated,
  AlertTargetView,
} from '../../contract/alerts.js';
import type { ApiClient } from './client.js';

/** What `add` sends: the rule's fields the caller gives (the server defaults the rest). */
export interface NewAlertTarget {
  url: string;
  events?: AlertKind[];
  agents?: string[];
  after_seconds?: number;
  format?: AlertFormat;
  label?: string;
}

/** The calls of `/v1/alerts`; each throws the client's `ServerError` / `NetworkError`. */
export class AlertsApi {
  constructor(private readonly client: ApiClient) {}

  /** `POST /v1/alerts`: the new target with its `whsec_` secret (shown this once). */
  async add(target: NewAlertTarget): Promise<AlertTargetCreated> {
    const res = await this.client.request('POST', '/v1/alerts', json(target));
    return res.body as AlertTargetCreated;
  }

  /** `GET /v1/alerts`: the tenant's targets, oldest first, never a secret. */
  async list(): Promise<AlertTargetView[]> {
    const res = await this.client.request('GET', '/v1/alerts');
    return (res.body as { targets: AlertTargetView[] }).targets;
  }

  /** `DELETE /v1/alerts/{id}`. */
  async remove(id: string): Promise<void> {
    await this.client.request('DELETE', `/v1/alerts/${encodeURIComponent(id)}`);
  }

  /** `POST /v1/alerts/{id}/rotate`: the target with its new secret; the previous one signs for `graceSeconds` more. */
  async rotate(id: string, graceSeconds?: number): Promise<AlertTargetCreated> {
    const body = graceSeconds === undefined ? {} : { grace_seconds: graceSeconds };
    const res = await this.client.request('POST', `/v1/alerts/${encodeURIComponent(id)}/rotate`, json(body));
    return res.body as AlertTargetCreated;
  }

  /** `POST /v1/alerts/{id}/test`: queues a test event for this target; @returns its id */
  async test(id: string): Promise<string> {
    const res = await this.client.request('POST', `/v1/alerts/${encodeURIComponent(id)}/test`);
    return (res.body as { event_id: string }).event_id;
  }

  /** `GET /v1/alerts/{id}/deliveries?limit=`: newest first, `limit` 1..200. */
  async deliveries(id: string, limit = 50): Promise<AlertDeliveryView[]> {
    const res = await this.client.request(
      'GET',
      `/v1/alerts/${encodeURIComponent(id)}/deliveries?limit=${limit}`,
    );
    return (res.body as { deliveries: AlertDeliveryView[] }).deliveries;
  }
}

function json(body: unknown) {
  return { body: JSON.stringify(body), contentType: 'application/json' };
}
