/**
 * Which targets an event goes to (lib/service/alerts/match.ts, issue 28 item 2): kinds, agents, a test
 * event to its own target only.
 */
import { describe, expect, it } from 'vitest';
import { matches } from '../../lib/service/alerts/match.js';
import type { AlertTarget } from '../../lib/store/index.js';

const target = (over: Partial<AlertTarget>): AlertTarget => ({
  tenant: 'acme',
  id: 'at_A',
  url: 'https://example.com/hook',
  format: 'standard',
  events: [],
  agents: [],
  after_seconds: 0,
  label: null,
  secrets: [{ sealed: 'x', until: null }],
  created_at: '2026-12-07T10:00:00.000Z',
  created_by: 'tok_x',
  version: 1,
  ...over,
});
const event = (over: {
  kind?: string;
  sid?: string | null;
  agents?: string[];
  only_target?: string | null;
}) => ({
  kind: 'session.blocked',
  sid: 's_1' as string | null,
  agents: [] as string[],
  only_target: null as string | null,
  ...over,
});

describe('matches', () => {
  it('a rule with no kinds and no agents takes every event, tenant-wide ones too', () => {
    expect(matches(target({}), event({}))).toBe(true);
    expect(matches(target({}), event({ kind: 'quota.near', sid: null }))).toBe(true);
  });

  it('kinds: only those named', () => {
    const t = target({ events: ['session.done', 'record.damaged'] });
    expect(matches(t, event({ kind: 'session.done' }))).toBe(true);
    expect(matches(t, event({ kind: 'session.blocked' }))).toBe(false);
  });

  it('agents: a session one of whose writers is a named agent; never a tenant-wide event', () => {
    const t = target({ agents: ['codex', 'claude-code'] });
    expect(matches(t, event({ agents: ['claude-code'] }))).toBe(true);
    expect(matches(t, event({ agents: ['aider', 'codex'] }))).toBe(true);
    expect(matches(t, event({ agents: ['aider'] }))).toBe(false);
    expect(matches(t, event({ agents: [] }))).toBe(false);
    expect(matches(t, event({ kind: 'budget.crossed', sid: null, agents: ['codex'] }))).toBe(false);
  });

  it('a test event goes to the target it names only, whatever the rule; no rule takes one otherwise', () => {
    const t = target({ events: ['session.done'], agents: ['codex'] });
    expect(matches(t, event({ kind: 'alert.test', sid: null, only_target: 'at_A' }))).toBe(true);
    expect(matches(target({}), event({ kind: 'alert.test', sid: null, only_target: 'at_B' }))).toBe(false);
    expect(matches(target({}), event({ kind: 'alert.test', sid: null }))).toBe(false);
  });
});
