/**
 * `hansard serve --public-url` (issue 29): the origin sign-in's redirect URI and alert links use when the
 * board is reached through a proxy or another name; taken from HANSARD_PUBLIC_URL too, refused (exit 2,
 * before the data directory is touched) when it is not an http(s) origin alone. And the local sign-in
 * deps `hansard serve` builds (lib/deploy/local-serve.ts `localSignIn`): the sign-in key file, the
 * default settings with that origin.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { publicOrigin } from '../../../lib/client/cli/cmd-serve.js';
import { SIGN_IN_KEY_FILE } from '../../../lib/deploy/local-sealer.js';
import { localSignIn } from '../../../lib/deploy/local-serve.js';
import { DEFAULT_SIGN_IN_CONFIG } from '../../../lib/service/sign-in/deps.js';
import { runHansard } from '../../support/cli.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'hansard-public-url-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('hansard serve --public-url', () => {
  it('is in --help with its variable and what to register at a provider', async () => {
    const r = await runHansard(['serve', '--help'], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/--public-url <url> +the origin the board is reached at/);
    expect(r.out).toContain('HANSARD_PUBLIC_URL');
    expect(r.out).toContain('http://127.0.0.1:PORT/login/oidc/callback');
    expect(r.out).toContain('https://hansard.example.com/login/oidc/callback');
  });

  it('refuses anything but an http(s) origin, exit 2, before the data directory is made', async () => {
    for (const bad of [
      'hansard.example.com',
      'ftp://hansard.example.com',
      'https://hansard.example.com/board',
      'https://hansard.example.com/?x=1',
      'https://hansard.example.com/#top',
      'https://me:pw@hansard.example.com',
    ]) {
      const r = await runHansard(['serve', '--data', 'd', '--port', '0', '--public-url', bad], { cwd: dir });
      expect(r.code, bad).toBe(2);
      expect(r.err, bad).toContain(`--public-url ${bad} is not an origin`);
    }
    expect(existsSync(join(dir, 'd'))).toBe(false);
  });

  it('reads HANSARD_PUBLIC_URL when the flag is absent (the same check)', async () => {
    const before = process.env.HANSARD_PUBLIC_URL;
    process.env.HANSARD_PUBLIC_URL = 'https://hansard.example.com/board';
    try {
      const r = await runHansard(['serve', '--data', 'd', '--port', '0'], { cwd: dir });
      expect(r.code).toBe(2);
      expect(r.err).toContain('--public-url https://hansard.example.com/board is not an origin');
    } finally {
      if (before === undefined) delete process.env.HANSARD_PUBLIC_URL;
      else process.env.HANSARD_PUBLIC_URL = before;
    }
  });

  it('takes an origin, a trailing slash or a port allowed, as the origin alone', () => {
    expect(publicOrigin('https://hansard.example.com')).toBe('https://hansard.example.com');
    expect(publicOrigin('https://Hansard.Example.com/')).toBe('https://hansard.example.com');
    expect(publicOrigin('http://10.0.0.5:8787')).toBe('http://10.0.0.5:8787');
    expect(publicOrigin('https://hansard.example.com:443')).toBe('https://hansard.example.com');
  });
});

describe('localSignIn', () => {
  it("seals under the data directory's sign-in key file and carries the origin into the defaults", async () => {
    const signIn = localSignIn(dir, 'https://hansard.example.com');
    expect(signIn.config).toEqual({ ...DEFAULT_SIGN_IN_CONFIG, publicOrigin: 'https://hansard.example.com' });
    const sealed = await signIn.sealer.seal('local', 'cookie-key-material');
    expect(await signIn.sealer.open('local', sealed)).toBe('cookie-key-material');
    expect(readdirSync(dir)).toEqual([SIGN_IN_KEY_FILE]);
    // without --public-url: the origin each request arrives at
    expect(localSignIn(dir, null).config.publicOrigin).toBeNull();
    expect(await localSignIn(dir, null).sealer.open('local', sealed)).toBe('cookie-key-material');
  });
});
