/**
 * Alerts on the board (issue 28 item 5): the alerts page (`GET /alerts`, admins only: each target with its
 * last deliveries, its dead letters counted in red, and a "Send a test" button), the page a viewer without
 * the `admin` scope gets instead, and the session page's "Alerts" part (what the session fired: kind,
 * status, time; never a target's URL, since its readers are not admins). A target's URL is shown with
 * everything after its host that may be a credential masked (`maskTargetUrl`): a Slack incoming-webhook
 * URL's path is its secret. hono/jsx escapes HTML; labels and agent names also go through `escapeControl`
 * (issue 8.4).
 */
import { ALERT_KINDS, type AlertDeliveryView } from '../contract/alerts.js';
import { escapeControl } from '../log/format/escape.js';
import type { BoardAlerts, BoardAlertTarget } from '../service/board/alerts.js';
import { BOARD_DELIVERIES, DEAD_WINDOW } from '../service/board/alerts.js';
import { ago, sessionHref, When } from './components.js';
import { Layout } from './layout.js';

/** A first path segment that reads as a word (`services`, `hooks`, `webhook`), not as a token. */
const WORD_SEGMENT = /^[A-Za-z][A-Za-z_-]{0,23}$/;

/**
 * A target URL as the board shows it: scheme, host and port; the first path segment when it reads as a
 * word, the rest as `…`; never a user, password, query or fragment. `https://hooks.slack.com/services/T0/B0/x`
 * → `https://hooks.slack.com/services/…`; `https://example.com/a8f3…` → `https://example.com/…`.
 * A string that is not a URL is shown as `(not a URL)`.
 */
export function maskTargetUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return '(not a URL)';
  }
  const segments = u.pathname.split('/').filter((s) => s !== '');
  const first = segments[0];
  let path = '';
  if (first !== undefined && WORD_SEGMENT.test(first)) {
    path = `/${first}${segments.length > 1 ? '/…' : ''}`;
  } else if (segments.length > 0) {
    path = '/…';
  }
  const rest = (u.search || u.hash) && !path.endsWith('…') ? `${path ? '' : '/'}?…` : '';
  return `${u.origin}${path}${rest}`;
}

/** When a pending delivery is tried next, relative to `now`: `in 4 min`, `due now`. */
export function nextTry(iso: string, now: string): string {
  const s = Math.round((Date.parse(iso) - Date.parse(now)) / 1000);
  if (s <= 0) return 'due now';
  if (s < 60) return `in ${s} s`;
  const min = Math.round(s / 60);
  if (min < 120) return `in ${min} min`;
  const h = Math.round(min / 60);
  return h < 48 ? `in ${h} h` : `in ${Math.round(h / 24)} d`;
}

const STATUS_WORDS: Record<AlertDeliveryView['status'], string> = {
  pending: 'pending',
  delivered: 'delivered',
  dead: 'dead letter',
  skipped: 'skipped',
};

/** A delivery's status as a pill; the word says it, the colour only repeats it. */
export function DeliveryPill({ status }: { status: AlertDeliveryView['status'] }) {
  return (
    <span class={`pill dl-${status}`} data-status={status}>
      {STATUS_WORDS[status]}
    </span>
  );
}

/** `600` seconds as `10 min`, `0` as `at once`. */
function afterWords(seconds: number): string {
  if (seconds === 0) return 'at once';
  if (seconds % 3600 === 0) return `held ${seconds / 3600} h`;
  if (seconds % 60 === 0) return `held ${seconds / 60} min`;
  return `held ${seconds} s`;
}

/** The last attempt's answer: `HTTP 500`, an error, both, or nothing yet. */
function lastAnswer(d: AlertDeliveryView): string {
  const status = d.last_status === null ? '' : `HTTP ${d.last_status}`;
  const error = d.last_error ?? '';
  // the sender's error of a refused answer already starts with its status (`HTTP 500: …`)
  const s = error.startsWith(status) ? error || status : [status, error].filter((p) => p !== '').join(': ');
  if (s) return escapeControl(s);
  if (d.status === 'skipped' && d.skipped_reason) return escapeControl(d.skipped_reason);
  return d.attempts === 0 ? 'not tried yet' : '—';
}

function DeliveryRows({ deliveries, now }: { deliveries: AlertDeliveryView[]; now: string }) {
  return (
    <table class="deliveries">
      <thead>
        <tr>
          <th scope="col">Event</th>
          <th scope="col">Session</th>
          <th scope="col">Status</th>
          <th scope="col">Attempts</th>
          <th scope="col">Last answer</th>
          <th scope="col">Next try / delivered</th>
        </tr>
      </thead>
      <tbody>
        {deliveries.map((d) => (
          <tr data-event={d.event_id} data-status={d.status}>
            <td data-label="Event">
              <code>{d.kind}</code> <When iso={d.created_at} now={now} />
            </td>
            <td data-label="Session">
              {d.sid ? (
                <a class="mono" href={sessionHref(d.sid)}>
                  {d.sid}
                </a>
              ) : (
                <span class="muted">tenant-wide</span>
              )}
            </td>
            <td data-label="Status">
              <DeliveryPill status={d.status} />
            </td>
            <td data-label="Attempts">{d.attempts}</td>
            <td data-label="Last answer" class="last-answer">
              {lastAnswer(d)}
            </td>
            <td data-label="Next try / delivered" data-when>
              {d.status === 'pending' && d.next_at ? (
                <time datetime={d.next_at} title={`${d.next_at.replace('T', ' ').slice(0, 19)} UTC`}>
                  {nextTry(d.next_at, now)}
                </time>
              ) : d.delivered_at ? (
                <When iso={d.delivered_at} now={now} />
              ) : (
                <span class="muted">—</span>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function TargetSection({ t, csrf, now }: { t: BoardAlertTarget; csrf: string; now: string }) {
  const { target } = t;
  const title = target.label ? escapeControl(target.label) : 'Unlabelled target';
  const events = target.events.length === 0 || target.events.length === ALERT_KINDS.length;
  return (
    <section class="alert-target" data-target={target.id} aria-labelledby={`h-${target.id}`}>
      <h2 id={`h-${target.id}`}>
        {title}{' '}
        {t.dead > 0 ? (
          <strong class="dead-count" data-dead={t.dead}>
            {t.dead} dead letter{t.dead === 1 ? '' : 's'}
            {t.windowFull ? ` in the last ${DEAD_WINDOW}` : ''}
          </strong>
        ) : (
          <span class="muted dead-none" data-dead="0">
            no dead letters
          </span>
        )}
      </h2>
      <dl class="target-rule">
        <dt>URL</dt>
        <dd>
          <code data-url>{maskTargetUrl(target.url)}</code>
        </dd>
        <dt>Format</dt>
        <dd>{target.format === 'slack' ? 'Slack incoming webhook' : 'Standard Webhooks JSON'}</dd>
        <dt>Events</dt>
        <dd>{events ? 'all' : target.events.join(', ')}</dd>
        <dt>Agents</dt>
        <dd>{target.agents.length === 0 ? 'any' : escapeControl(target.agents.join(', '))}</dd>
        <dt>Sends</dt>
        <dd>{afterWords(target.after_seconds)}</dd>
        <dt>Id</dt>
        <dd>
          <small class="mono">{target.id}</small>
        </dd>
      </dl>
      <form class="send-test" method="post" action={`/alerts/${target.id}/test`}>
        <input type="hidden" name="csrf" value={csrf} />
        <button type="submit">Send a test</button>
      </form>
      <h3>Last deliveries</h3>
      {t.deliveries.length === 0 ? (
        <p class="muted">No deliveries yet.</p>
      ) : (
        <DeliveryRows deliveries={t.deliveries} now={now} />
      )}
    </section>
  );
}

/** What a "Send a test" redirect says on the page (`?sent=`, `?gone=`). */
export type AlertsFlash = { kind: 'sent'; label: string } | { kind: 'gone' } | null;

/**
 * `GET /alerts` (see the module's doc). `csrf` is the board session's form token (every form carries
 * it); `flash` the line a "Send a test" left.
 */
export function AlertsPage({ data, csrf, flash }: { data: BoardAlerts; csrf: string; flash: AlertsFlash }) {
  return (
    <Layout title="alerts" signedIn>
      {flash?.kind === 'sent' ? (
        <p class="flash" role="status">
          A test event was queued for {flash.label}: it is sent on the alert worker's next pass, and shows
          below as a delivery of <code>alert.test</code>.
        </p>
      ) : flash?.kind === 'gone' ? (
        <p class="flash error" role="status">
          That target no longer exists: nothing was sent.
        </p>
      ) : null}
      <p class="muted">
        Where this tenant's alerts go, each with its last {BOARD_DELIVERIES} deliveries, newest first. A
        delivery is retried with backoff for a day, then kept as a dead letter. Add or remove targets with{' '}
        <code>hansard alerts add --url URL</code> and <code>hansard alerts remove ID</code> (docs/alerts.md).
      </p>
      {data.targets.length === 0 ? (
        <p class="empty">
          No alert targets yet. Add one with <code>hansard alerts add --url URL</code>.
        </p>
      ) : (
        data.targets.map((t) => <TargetSection t={t} csrf={csrf} now={data.now} />)
      )}
    </Layout>
  );
}

/**
 * `GET /alerts` for a board viewer who may not administer alerts (403): without the `admin` scope, or
 * with a token bound to one session. Says which token to ask for.
 */
export function AlertsForbiddenPage({ has, bound }: { has: readonly string[]; bound: boolean }) {
  return (
    <Layout title="alerts: admins only" signedIn>
      <p class="error">
        The alerts page shows where this tenant's alerts go, so it needs a token with the <code>admin</code>{' '}
        scope (and <code>board</code>, to sign a browser in), bound to no session.
      </p>
      <p>
        This browser is signed in with a token that has {has.length ? has.join(', ') : 'no scopes'}
        {bound ? ', bound to one session' : ''}. Ask an admin of this tenant for a board sign-in token with
        both scopes, made with <code>hansard token create --scopes board,admin --label "board admin"</code>{' '}
        (run with an admin token), then sign in with it: open <code>/?token=&lt;that token&gt;</code> on this
        board or paste it at <a href="/login?next=%2Falerts">sign in</a>.
      </p>
      <p>
        Back to the <a href="/">board</a>.
      </p>
    </Layout>
  );
}

/** A delivery as the session page lists it: no target, no URL, no error text. */
export type SessionAlert = Omit<AlertDeliveryView, 'last_error'>;

/**
 * The session page's "Alerts" part: the alerts this session fired, newest first (kind, status, time), one
 * line per event and target. Rendered only when there are some.
 */
export function SessionAlertsPart({ alerts, now }: { alerts: SessionAlert[]; now: string }) {
  if (alerts.length === 0) return null;
  return (
    <details class="side-part" open>
      <summary>
        <h2 id="side-alerts">Alerts</h2>
      </summary>
      <p class="muted">What this session fired, newest first: one line per alert target.</p>
      <ul class="session-alerts">
        {alerts.map((a) => (
          <li data-event={a.event_id} data-status={a.status}>
            <code>{a.kind}</code> <DeliveryPill status={a.status} />{' '}
            <time datetime={a.created_at} title={`${a.created_at.replace('T', ' ').slice(0, 19)} UTC`}>
              {ago(a.created_at, now)}
            </time>
          </li>
        ))}
      </ul>
    </details>
  );
}
