/**
 * The local sealer's second purpose (lib/deploy/local-sealer.ts, issue 29): sign-in's secrets (the tenants'
 * OIDC client secrets, the board's cookie keys) sealed under a key file of their own with their own
 * associated data, and the alerts' sealing unchanged: a sealed text made by the issue-28 sealer under a
 * known key still opens (a known answer), and neither purpose opens the other's, even under one key.
 */
import { copyFileSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ALERT_KEY_FILE,
  ALERT_SEALING,
  LocalSecretSealer,
  SealedSecretError,
  SIGN_IN_KEY_FILE,
  SIGN_IN_SEALING,
} from '../../lib/deploy/local-sealer.js';

const CLIENT_SECRET = 'oidc-client-secret-Zq8RkX2mVw4t';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'hansard-sealer-sign-in-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('LocalSecretSealer for sign-in', () => {
  it('opens what it sealed, under sign-in-secrets.key (32 bytes, 0600), leaving the alerts key alone', async () => {
    const sealer = new LocalSecretSealer(dir, SIGN_IN_SEALING);
    const sealed = await sealer.seal('acme', CLIENT_SECRET);
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('Zq8RkX2');
    expect(await sealer.open('acme', sealed)).toBe(CLIENT_SECRET);
    expect(readdirSync(dir)).toEqual([SIGN_IN_KEY_FILE]);
    const st = statSync(join(dir, SIGN_IN_KEY_FILE));
    expect(st.mode & 0o777).toBe(0o600);
    expect(st.size).toBe(32);
    // a second sign-in sealer on the directory shares the key
    expect(await new LocalSecretSealer(dir, SIGN_IN_SEALING).open('acme', sealed)).toBe(CLIENT_SECRET);
    await expect(sealer.open('globex', sealed)).rejects.toThrow(SealedSecretError);
  });

  it('keeps the two purposes apart: separate key files, and the purpose in the associated data', async () => {
    const alerts = new LocalSecretSealer(dir);
    const signIn = new LocalSecretSealer(dir, SIGN_IN_SEALING);
    const forAlerts = await alerts.seal('acme', 'whsec_x');
    const forSignIn = await signIn.seal('acme', CLIENT_SECRET);
    expect(readdirSync(dir).sort()).toEqual([ALERT_KEY_FILE, SIGN_IN_KEY_FILE].sort());
    await expect(signIn.open('acme', forAlerts)).rejects.toThrow(/sealed sign-in secret does not open/);
    await expect(alerts.open('acme', forSignIn)).rejects.toThrow(/sealed alert secret does not open/);

    // Under one key (the alerts' key file copied over sign-in's), the associated data alone still refuses.
    const same = mkdtempSync(join(tmpdir(), 'hansard-sealer-same-key-'));
    try {
      copyFileSync(join(dir, ALERT_KEY_FILE), join(same, ALERT_KEY_FILE));
      copyFileSync(join(dir, ALERT_KEY_FILE), join(same, SIGN_IN_KEY_FILE));
      const a = new LocalSecretSealer(same, ALERT_SEALING);
      const s = new LocalSecretSealer(same, SIGN_IN_SEALING);
      expect(await a.open('acme', forAlerts)).toBe('whsec_x');
      await expect(s.open('acme', forAlerts)).rejects.toThrow(SealedSecretError);
      await expect(a.open('acme', await s.seal('acme', CLIENT_SECRET))).rejects.toThrow(SealedSecretError);
    } finally {
      rmSync(same, { recursive: true, force: true });
    }
  });

  it('opens an alert secret the issue-28 sealer made (known answer: key bytes 0..31, tenant acme)', async () => {
    // Made by lib/deploy/local-sealer.ts before sign-in existed (commit d7fb63e), with this key file.
    writeFileSync(join(dir, ALERT_KEY_FILE), Buffer.from(Array.from({ length: 32 }, (_, i) => i)));
    const sealed = 'v1.B0qb0L-47FaR5eLP.v5BPXf05edvVpTo-cuzMeg.TtFU8qrtXPJ6GWw5XD88HO3U';
    expect(await new LocalSecretSealer(dir).open('acme', sealed)).toBe('whsec_known-answer');
    expect(await new LocalSecretSealer(dir, ALERT_SEALING).open('acme', sealed)).toBe('whsec_known-answer');
  });

  it('names its own key file and secrets when the key file is of another size', async () => {
    writeFileSync(join(dir, SIGN_IN_KEY_FILE), 'short');
    await expect(new LocalSecretSealer(dir, SIGN_IN_SEALING).seal('acme', CLIENT_SECRET)).rejects.toThrow(
      /sign-in key file .*sign-in-secrets\.key holds 5 bytes, not 32: .*every stored sign-in secret/,
    );
    // the alerts' sealer is not held up by it
    expect(
      await new LocalSecretSealer(dir).open('acme', await new LocalSecretSealer(dir).seal('acme', 'x')),
    ).toBe('x');
    await expect(new LocalSecretSealer(dir, SIGN_IN_SEALING).open('acme', 'v2.a.b.c')).rejects.toThrow(
      /not a sealed sign-in secret/,
    );
  });
});
