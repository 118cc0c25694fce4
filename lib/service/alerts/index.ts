/** Alerts (issue 28): events, targets, deliveries and the worker that sends them. */
export { noteDamage, noteStorage } from './crossings.js';
export { type AlertConfig, type AlertDeps, DEFAULT_ALERT_CONFIG, type SecretSealer } from './deps.js';
export { leaseWatch, statusEvents } from './events.js';
export {
  addTarget,
  deliveryView,
  listTargets,
  removeTarget,
  rotateSecret,
  sendTest,
  sessionAlerts,
  targetDeliveries,
  targetView,
} from './targets.js';
export { AlertWorker, type DrainStats } from './worker.js';
