/** The audit list (issue 29 item 4): what people and tokens did, recorded by the admin verbs, read by admins. */
export { type AuditPage, auditView, listAudit } from './list.js';
export {
  type AuditNote,
  type AuditOptions,
  type AuditVia,
  actorName,
  auditActor,
  recordAudit,
} from './record.js';
