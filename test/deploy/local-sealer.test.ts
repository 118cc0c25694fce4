/**
 * The local sealer of alert targets' secrets (lib/deploy/local-sealer.ts, issue 28 item 6) on a real temp
 * directory: a round trip, the tenant bound as associated data, tampering refused, the key file made
 * 0600 and create-only, and processes racing to make it ending with one key that all of them use.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ALERT_KEY_FILE, LocalSecretSealer, SealedSecretError } from '../../lib/deploy/local-sealer.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'hansard-sealer-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('LocalSecretSealer', () => {
  it('opens what it sealed for the same tenant; the sealed text is v1 base64url and holds no plain text', async () => {
    const sealer = new LocalSecretSealer(dir);
    const sealed = await sealer.seal('acme', SECRET);
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('MfKQ9r8');
    expect(await sealer.open('acme', sealed)).toBe(SECRET);
    // a fresh iv every time: the same secret never seals to the same text
    expect(await sealer.seal('acme', SECRET)).not.toBe(sealed);
  });

  it("refuses another tenant's sealed secret", async () => {
    const sealer = new LocalSecretSealer(dir);
    const sealed = await sealer.seal('acme', SECRET);
    await expect(sealer.open('globex', sealed)).rejects.toThrow(SealedSecretError);
    await expect(sealer.open('globex', sealed)).rejects.not.toThrow(/MfKQ9r8/);
  });

  it('refuses a sealed text with any part altered, or not one at all', async () => {
    const sealer = new LocalSecretSealer(dir);
    const sealed = await sealer.seal('acme', SECRET);
    const parts = sealed.split('.');
    for (const i of [1, 2, 3]) {
      const bytes = Buffer.from(parts[i]!, 'base64url');
      bytes[0]! ^= 1;
      const altered = parts.map((p, j) => (j === i ? bytes.toString('base64url') : p)).join('.');
      await expect(sealer.open('acme', altered), `part ${i}`).rejects.toThrow(SealedSecretError);
    }
    await expect(sealer.open('acme', `v2.${parts.slice(1).join('.')}`)).rejects.toThrow(/not a sealed/);
    await expect(sealer.open('acme', SECRET)).rejects.toThrow(/not a sealed/);
  });

  it('makes the key file on first use: 32 bytes, mode 0600, no temp file left', async () => {
    expect(readdirSync(dir)).toEqual([]);
    await new LocalSecretSealer(dir).seal('acme', SECRET);
    expect(readdirSync(dir)).toEqual([ALERT_KEY_FILE]);
    const st = statSync(join(dir, ALERT_KEY_FILE));
    expect(st.mode & 0o777).toBe(0o600);
    expect(st.size).toBe(32);
  });

  it("a second sealer on the same directory opens the first's (and the first a fresh one's)", async () => {
    const a = new LocalSecretSealer(dir);
    const sealed = await a.seal('acme', SECRET);
    const b = new LocalSecretSealer(dir);
    expect(await b.open('acme', sealed)).toBe(SECRET);
    expect(await a.open('acme', await b.seal('acme', 'x'))).toBe('x');
  });

  it('refuses a key file of another size and leaves it as it is', async () => {
    writeFileSync(join(dir, ALERT_KEY_FILE), 'short');
    await expect(new LocalSecretSealer(dir).seal('acme', SECRET)).rejects.toThrow(/holds 5 bytes, not 32/);
    expect(readFileSync(join(dir, ALERT_KEY_FILE), 'utf8')).toBe('short');
  });

  it('processes racing to make the key file agree on one key', async () => {
    // Each child seals its own secret at once (the key file does not exist yet) and prints it sealed.
    const main = `
      import { LocalSecretSealer } from ${JSON.stringify(join(ROOT, 'lib/deploy/local-sealer.ts'))};
      const [dir, n] = process.argv.slice(1);
      process.stdout.write(await new LocalSecretSealer(dir).seal('acme', 'secret-' + n));
    `;
    const child = (n: number) =>
      new Promise<string>((resolve, reject) => {
        const p = spawn(
          process.execPath,
          ['--import', 'tsx', '--input-type=module', '-e', main, dir, String(n)],
          { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
        );
        let out = '';
        let err = '';
        p.stdout.on('data', (d) => {
          out += d;
        });
        p.stderr.on('data', (d) => {
          err += d;
        });
        p.on('error', reject);
        p.on('close', (code) =>
          code === 0 ? resolve(out) : reject(new Error(`child ${n}: ${code} ${err}`)),
        );
      });
    const sealed = await Promise.all([0, 1, 2, 3].map(child));
    const sealer = new LocalSecretSealer(dir);
    expect(await Promise.all(sealed.map((s) => sealer.open('acme', s)))).toEqual(
      [0, 1, 2, 3].map((n) => `secret-${n}`),
    );
    expect(readdirSync(dir)).toEqual([ALERT_KEY_FILE]);
  }, 60_000);
});
