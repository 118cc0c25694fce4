/**
 * The board's served scripts (lib/board/assets.ts): each found and hashed; the Lambda bundle copies the
 * same npm files beside itself (infra/lambda.ts `BOARD_ASSET_FILES`), where they are looked for when the
 * package cannot be resolved.
 */
import { describe, expect, it } from 'vitest';
import { BOARD_ASSET_FILES } from '../../infra/lambda.js';
import { assetHref, getAsset, VENDOR_ASSETS } from '../../lib/board/assets.js';
import { BOARD_SCRIPT } from '../../lib/board/client-script.js';

describe('the board assets', () => {
  it('are the files the Lambda bundle copies', () => {
    expect([...BOARD_ASSET_FILES].sort()).toEqual(Object.values(VENDOR_ASSETS).sort());
  });

  it('are found, typed as JavaScript, and linked with a hash of their content', () => {
    for (const name of ['htmx.min.js', 'sse.min.js', 'board.js'] as const) {
      const a = getAsset(name)!;
      expect(a.type).toBe('text/javascript; charset=utf-8');
      expect(assetHref(name)).toBe(`/assets/${name}?v=${a.hash}`);
    }
    expect(getAsset('htmx.min.js')!.body).toContain('htmx');
    expect(getAsset('board.js')!.body).toBe(BOARD_SCRIPT);
    expect(getAsset('../package.json')).toBeNull();
  });

  it('is htmx 2.0.x (4 is a rewrite whose SSE and config differ)', () => {
    expect(getAsset('htmx.min.js')!.body).toMatch(/version:"2\.0\.\d+"/);
  });
});
