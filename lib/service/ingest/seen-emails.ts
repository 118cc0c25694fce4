/**
 * People seen writing with an email (issue 29 item 4): a `participant.join` that carries `email` (the
 * capture hook records the person's git `user.email` when they consent, lib/client/capture/git-email.ts)
 * puts its `user_id` in the `seen_user_ids` of the tenant's person record for that email, so a person
 * signed in with that email finds those sessions under "Mine" (lib/service/sign-in/session.ts).
 *
 * The email is the writer's own claim, never checked against anything: anyone with an ingest token can
 * write any email on a join. So it grants nothing (no role, no scope, no session is shown that the
 * person's role would not show anyway): it only chooses which person ids the person's own view lists.
 * An admin's link (`hansard people link`, `user_ids`) is the vouched-for one.
 *
 * Ingest draws the claims from the chunk's lines it already parses for the session summary
 * (`emailClaimsOf`, over lines.ts's summary events) and records them once the chunk is durable and
 * indexed (`noteSeenEmails`): never failing the ingest answer, and costing a read and at most one write
 * per claim, only for chunks that hold a join with an email (a captured session has one).
 */
import { EmailAddress, MAX_LINKED_IDS, normalEmail, PersonId } from '../../contract/sign-in.js';
import { nameForm } from '../../log/format/names.js';
import type { PersonRecord } from '../../store/index.js';
import { isoNow, type ServiceContext } from '../shared/context.js';
import { updatePerson } from '../sign-in/records.js';
import type { SummaryEvent } from './summary.js';

/** A join's claim: the writer says person `user_id` writes as `email` (lower case, `normalEmail`). */
export interface EmailClaim {
  email: string;
  user_id: string;
}

/**
 * Most claims one chunk records: a captured session writes one join with an email, so more are someone
 * else's bytes, and each costs a write; the first ones of the chunk are kept.
 */
export const MAX_CLAIMS_PER_CHUNK = 4;

/** `updated_by` of a person record this module makes (one no sign-in or admin made first). */
export const SEEN_BY = 'capture';

/**
 * The claims of a chunk's events (`SummaryEvent`s, as lines.ts keeps them): each `participant.join` whose
 * `email` is a string that is an address once trimmed and lower-cased (`EmailAddress`: one `@`, no space,
 * at most 254 characters; no control character) and whose `user_id` is a person id (`PersonId`, in NFC as
 * the summary keeps names). Anything else is ignored, never refused: the line is stored as written.
 * Distinct pairs, in chunk order, at most `MAX_CLAIMS_PER_CHUNK`. Pure.
 */
export function emailClaimsOf(events: readonly SummaryEvent[]): EmailClaim[] {
  const out: EmailClaim[] = [];
  for (const e of events) {
    if (out.length >= MAX_CLAIMS_PER_CHUNK) break;
    if (e.type !== 'participant.join') continue;
    const { email: raw, user_id: who } = e.obj;
    if (typeof raw !== 'string' || typeof who !== 'string') continue;
    const email = normalEmail(raw);
    const user_id = nameForm(who);
    if (/[\p{Cc}\p{Cf}]/u.test(email) || !EmailAddress.safeParse(email).success) continue;
    if (!PersonId.safeParse(user_id).success) continue;
    if (!out.some((c) => c.email === email && c.user_id === user_id)) out.push({ email, user_id });
  }
  return out;
}

/**
 * `seen` with `userId` as its most recent entry (last): moved there when it is in it already, and only
 * the latest `MAX_LINKED_IDS` kept.
 */
export function withSeen(seen: readonly string[], userId: string): string[] {
  return [...seen.filter((id) => id !== userId), userId].slice(-MAX_LINKED_IDS);
}

/**
 * Records `claims` on the tenant's person records (`ctx.tenant` only: another tenant's records are never
 * read or written): each email's record gets the claim's `user_id` as its most recent `seen_user_ids`
 * entry (`withSeen`), through `updatePerson`'s conditional write (made when the email has no record yet,
 * with no role of its own: it then decides nothing that having no record would not). A record already
 * showing that id last is not written. The record's `updated_at`/`updated_by` stay as they were: they
 * say who last changed what it grants.
 *
 * A writer's own claim that only chooses what the person's view lists (module doc). Never throws: a
 * failed write is logged (`log`, default stderr) and left for the next join that claims it.
 */
export async function noteSeenEmails(
  ctx: ServiceContext,
  claims: readonly EmailClaim[],
  log: (line: string) => void = (line) => console.error(line),
): Promise<void> {
  if (claims.length === 0) return;
  const why = (err: unknown) => (err as Error)?.message ?? String(err);
  for (const c of claims) {
    try {
      const have = await ctx.state.getPerson(ctx.tenant, c.email);
      if (have?.seen_user_ids?.at(-1) === c.user_id) continue;
      // A record this makes says so (`SEEN_BY`); one that exists keeps who last changed it.
      await updatePerson(
        ctx.state,
        ctx.tenant,
        c.email,
        isoNow(ctx),
        (p: PersonRecord) => ({ ...p, seen_user_ids: withSeen(p.seen_user_ids ?? [], c.user_id) }),
        SEEN_BY,
      );
    } catch (err) {
      log(
        `person ids seen by email not recorded (tenant ${ctx.tenant}, user_id ${JSON.stringify(c.user_id)}; the chunk is stored, the next join with this email tries again): ${why(err)}`,
      );
    }
  }
}
