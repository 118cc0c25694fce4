/**
 * The page of a signed-in person who may not come in (issue 29 item 2). Kept apart from ./auth.ts, which
 * renders nothing itself.
 */
import type { Context } from 'hono';
import { SignInRefusedPage } from '../board/sign-in.js';
import { whomToAsk } from '../service/sign-in/records.js';
import type { Refusal } from '../service/sign-in/roles.js';

/**
 * The 403 page of a person refused (issue 29 item 2: "a page that says why and whom to ask"): at sign-in
 * (lib/http/routes/pages/oidc.tsx) or at a later request, after an admin changed their role.
 */
export async function refusedPage(
  c: Context,
  state: Parameters<typeof whomToAsk>[0],
  r: { why: Refusal; message: string; tenant: string; email: string; ask?: string[] },
) {
  const ask = r.ask ?? (await whomToAsk(state, r.tenant, r.why).catch(() => []));
  return c.html(
    <SignInRefusedPage tenant={r.tenant} email={r.email} reason={r.message} ask={ask} why={r.why} />,
    403,
  );
}
