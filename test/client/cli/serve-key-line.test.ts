/**
 * `hansard serve` says so on the start that makes the digest signing key (its --help promises it makes
 * one), naming the key and where it lives; a later start says nothing more about it.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServer } from '../../../lib/deploy/local-serve.js';
import { tmpDirs } from '../../support/tmp.js';

const scratch = tmpDirs('hansard-serve-key-');

describe('hansard serve and its signing key', () => {
  it('first start: one line naming the key made and DIR/keys/; the next start: no such line', async () => {
    const data = join(scratch.make(), 'data');
    const start = async () => {
      const printed: string[] = [];
      const srv = await startServer({
        port: 0,
        host: '127.0.0.1',
        data,
        print: (l) => printed.push(l),
        log: (l) => printed.push(l),
      });
      await srv.close();
      return printed;
    };
    const first = await start();
    const keyId = readdirSync(join(data, 'keys'))
      .find((f) => f.endsWith('.json'))!
      .replace(/\.json$/, '');
    expect(keyId).toMatch(/^k_/);
    const said = first.filter((l) => /signs session digests/.test(l));
    expect(said).toEqual([
      `Made the key that signs session digests: ${keyId} (${join(data, 'keys')}/; hansard keys --help)`,
    ]);
    const second = await start();
    expect(second.filter((l) => /signs session digests|signing key/i.test(l))).toEqual([]);
  });
});
