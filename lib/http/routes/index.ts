/**
 * Every operation of the app, one declaration each (../route.ts), grouped as `createApp` serves them. The
 * folder tree reads like the API: one file per operation, by resource. A new route is a new file and its
 * line here (docs/adr/0005-one-declaration-per-route.md).
 */
import type { Operation } from '../route.js';
import { addAlertTargetRoute } from './alerts/add.js';
import { listAlertDeliveriesRoute } from './alerts/deliveries.js';
import { listAlertTargetsRoute } from './alerts/list.js';
import { removeAlertTargetRoute } from './alerts/remove.js';
import { rotateAlertSecretRoute } from './alerts/rotate.js';
import { sendAlertTestRoute } from './alerts/send-test.js';
import { listSessionAlertsRoute } from './alerts/session.js';
import { attribution } from './analysis/attribution.js';
import { inspect } from './analysis/inspect.js';
import { verify } from './analysis/verify.js';
import { listAuditRoute } from './audit-log/list.js';
import { assetRoute } from './board/assets.js';
import { boardEvents } from './board/events.js';
import { boardFragment } from './board/fragment.js';
import { getWriterRoute } from './ingest/get-writer.js';
import { listChunksRoute } from './ingest/list-chunks.js';
import { postChunk } from './ingest/post-chunk.js';
import { docs } from './meta/docs.js';
import { health } from './meta/health.js';
import { keysRoute } from './meta/keys.js';
import { openapiJson } from './meta/openapi-json.js';
import { agentPage } from './pages/agents.js';
import { alertsPage, alertsTestPage } from './pages/alerts.js';
import { auditPage } from './pages/audit.js';
import { boardPage } from './pages/board.js';
import { login, loginPage, logout } from './pages/login.js';
import { oidcCallback, oidcStart } from './pages/oidc.js';
import { personPage } from './pages/people.js';
import { searchPageRoute } from './pages/search.js';
import { sessionPage } from './pages/session.js';
import { tokensPage, tokensRevokePage } from './pages/tokens.js';
import { getPersonRoute } from './people/get.js';
import { listPeopleRoute } from './people/list.js';
import { setPersonRoute } from './people/set.js';
import { reindexRoute } from './search/reindex.js';
import { searchRoute } from './search/search.js';
import { searchStatusRoute } from './search/status.js';
import { createDigestRoute } from './sessions/digests.js';
import { exportRoute } from './sessions/export.js';
import { getSessionRoute } from './sessions/get.js';
import { listSessionsRoute } from './sessions/list.js';
import { replay } from './sessions/replay.js';
import { getSegment } from './sessions/segment.js';
import { getBoardRoute } from './status/board.js';
import { getStatusRoute } from './status/get.js';
import { getOverviewRoute } from './status/overview.js';
import { reportStatusRoute } from './status/report.js';
import { getOidcRoute } from './tenants/oidc-get.js';
import { removeOidcRoute } from './tenants/oidc-remove.js';
import { setOidcRoute } from './tenants/oidc-set.js';
import { createTokenRoute } from './tokens/create.js';
import { createSessionTokenRoute } from './tokens/create-for-session.js';
import { listTokensRoute } from './tokens/list.js';
import { revokeTokenRoute } from './tokens/revoke.js';
import { tokenSelfRoute } from './tokens/self.js';
import { recomputeUsageRoute } from './usage/recompute.js';
import { getSessionUsageRoute } from './usage/session.js';
import { getTenantUsageRoute } from './usage/tenant.js';
import { workCheckpointRoute } from './work/checkpoint.js';
import { workGetRoute } from './work/get.js';
import { workHeartbeatRoute } from './work/heartbeat.js';
import { workListRoute } from './work/list.js';
import { workResumeRoute } from './work/resume.js';
import { workStartRoute } from './work/start.js';
import { workStopRoute } from './work/stop.js';
import { workWaitRoute } from './work/wait.js';

export { health };

/** Liveness and the API's own description: public, and cacheable (no private headers). */
export const META_ROUTES: readonly Operation[] = [health, openapiJson, keysRoute, docs, assetRoute];

/** The `/v1` API behind tokens (and the board's cookie where `auth` says so). */
export const API_ROUTES: readonly Operation[] = [
  postChunk,
  getWriterRoute,
  listChunksRoute,
  listSessionsRoute,
  getSessionRoute,
  replay,
  getSegment,
  createDigestRoute,
  exportRoute,
  verify,
  inspect,
  attribution,
  reportStatusRoute,
  getStatusRoute,
  getBoardRoute,
  getOverviewRoute,
  createTokenRoute,
  createSessionTokenRoute,
  listTokensRoute,
  tokenSelfRoute,
  revokeTokenRoute,
  getSessionUsageRoute,
  getTenantUsageRoute,
  recomputeUsageRoute,
  addAlertTargetRoute,
  listAlertTargetsRoute,
  removeAlertTargetRoute,
  rotateAlertSecretRoute,
  sendAlertTestRoute,
  listAlertDeliveriesRoute,
  listSessionAlertsRoute,
  getOidcRoute,
  setOidcRoute,
  removeOidcRoute,
  listPeopleRoute,
  getPersonRoute,
  setPersonRoute,
  listAuditRoute,
  workStartRoute,
  workListRoute,
  workGetRoute,
  workHeartbeatRoute,
  workCheckpointRoute,
  workWaitRoute,
  workStopRoute,
  workResumeRoute,
  searchRoute,
  searchStatusRoute,
  reindexRoute,
];

/** The board's HTML pages, for a browser. */
export const PAGE_ROUTES: readonly Operation[] = [
  loginPage,
  login,
  logout,
  oidcStart,
  oidcCallback,
  boardPage,
  sessionPage,
  personPage,
  agentPage,
  alertsPage,
  alertsTestPage,
  auditPage,
  searchPageRoute,
  tokensPage,
  tokensRevokePage,
  boardEvents,
  boardFragment,
];

/** All of them, in the order the document lists them. */
export const ROUTES: readonly Operation[] = [...META_ROUTES, ...API_ROUTES, ...PAGE_ROUTES];
