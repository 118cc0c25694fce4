// The tests of the data-guarding code Stryker mutates (stryker.config.json): fast and in-process (the
// HTTP ones serve the app on loopback in this process), so each mutant runs in seconds. `npm run mutate`;
// one module: `npm run mutate -- --mutate lib/log/read/merge.ts`.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'test/log/evidence.test.ts',
      // what a verdict rests on and the command matcher (lib/log/analyse/evidence-match.ts, issue 24.1 and 24.2)
      'test/log/evidence-provenance.test.ts',
      'test/log/evidence-origins.test.ts',
      'test/service/status/retention.test.ts',
      'test/service/work/content.test.ts',
      // the content rules' normalization (lib/log/format/text-normal.ts) and the look-alikes over HTTP (issue 24.4)
      'test/log/text-normal.test.ts',
      'test/attack/content-lookalikes.test.ts',
      'test/attack/content-lookalikes-more.test.ts',
      'test/service/status/declared.test.ts',
      // the merge (lib/log/read/merge.ts, fast-merge.ts): its own tests, the property tests (any interleaving
      // merges like the reference sort) and the seeds' golden lines
      'test/log/merge.test.ts',
      'test/log/properties.test.ts',
      'test/log/golden.test.ts',
      'test/log/fast-replay.test.ts',
      'test/log/replay.test.ts',
      'test/log/corrections.test.ts',
      // a merge stopped early (a client gone, an abort, a failing segment) closes every segment it opened
      'test/log/abort.test.ts',
      // ingest and tokens (lib/service/ingest*.ts, tokens.ts): the app over real HTTP on loopback with a
      // SQLite file and a segment directory, in process (a second or so a file)
      'test/service/ingest/lines.test.ts',
      'test/service/digests/ingest.test.ts',
      'test/http/ingest.test.ts',
      'test/http/isolation.test.ts',
      'test/http/auth.test.ts',
      'test/http/hostile-tokens.test.ts',
      'test/http/session-tokens.test.ts',
      'test/http/token-expiry.test.ts',
      'test/http/stored-scopes.test.ts',
      // work ownership (lib/service/work/owner.ts, issue 24.3): the rule case by case, and over real HTTP
      'test/service/work/owner.test.ts',
      'test/attack/work-ownership.test.ts',
      // alerts (issue 28): the address rule that keeps targets off private networks, which targets an
      // event goes to, event ids and the changes that fire them, the retry schedule
      'test/alerts/events.test.ts',
      'test/alerts/payload.test.ts',
      'test/alerts/schedule.test.ts',
      'test/alerts/send.test.ts',
      'test/alerts/match.test.ts',
      'test/attack/alerts-ssrf.test.ts',
      'test/alerts/delivery.test.ts',
      // team sign-in (issue 29): who gets which role, what a sealed cookie opens as, which keys open when,
      // when a session is over; and the flows against a real OpenID provider on loopback
      'test/sign-in/units.test.ts',
      'test/sign-in/session.test.ts',
      'test/sign-in/flow.test.ts',
    ],
    testTimeout: 30_000,
    env: { NO_COLOR: '1' },
  },
});
