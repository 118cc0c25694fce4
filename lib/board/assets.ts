/**
 * The files the board's pages load (issue 14.2): htmx and its SSE extension, read from their npm packages
 * (`htmx.org`, `htmx-ext-sse`; nothing from a CDN), and our own script (./client-script.ts). Each has a
 * content hash, so a page links `/assets/<name>?v=<hash>` and the answer may be cached for a year
 * (`immutable`): a new version is a new URL.
 *
 * Where the files are: `hansard serve` and the tests resolve them in node_modules (the CLI bundle leaves
 * packages external). The Lambda bundle has no node_modules: infra/lambda.ts copies them next to the
 * bundle, into `board-assets/`, which is looked in when the package cannot be resolved. Read once, on
 * first use, and kept: they never change while the process runs.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { BOARD_SCRIPT } from './client-script.js';

/** The vendored files: the name served, and the module path in its npm package. */
export const VENDOR_ASSETS = {
  'htmx.min.js': 'htmx.org/dist/htmx.min.js',
  'sse.min.js': 'htmx-ext-sse/dist/sse.min.js',
} as const;

/** What `/assets/` serves: the vendored files and our script. */
export type AssetName = keyof typeof VENDOR_ASSETS | 'board.js';

/** One served file: its bytes as text, media type, and content hash (16 hex digits of its SHA-256). */
export interface Asset {
  name: AssetName;
  body: string;
  type: string;
  hash: string;
}

const loaded = new Map<string, Asset | null>();

function readVendor(spec: string): string | null {
  try {
    return readFileSync(createRequire(import.meta.url).resolve(spec), 'utf8');
  } catch {
    // The Lambda bundle: copied beside it (infra/lambda.ts).
    try {
      return readFileSync(new URL(`./board-assets/${spec.split('/').pop()}`, import.meta.url), 'utf8');
    } catch {
      return null;
    }
  }
}

/** Whether `name` is one of the files `/assets/` serves. */
export function isAssetName(name: string): name is AssetName {
  return name === 'board.js' || Object.hasOwn(VENDOR_ASSETS, name);
}

/**
 * The asset `name`, or null when it is not one, or its package's file cannot be found (a deployment
 * that left it out: the pages then load no script and still work, without live updates).
 */
export function getAsset(name: string): Asset | null {
  if (!isAssetName(name)) return null;
  if (loaded.has(name)) return loaded.get(name) ?? null;
  const body = name === 'board.js' ? BOARD_SCRIPT : readVendor(VENDOR_ASSETS[name]);
  const asset =
    body === null
      ? null
      : {
          name,
          body,
          type: 'text/javascript; charset=utf-8',
          hash: createHash('sha256').update(body).digest('hex').slice(0, 16),
        };
  loaded.set(name, asset);
  return asset;
}

/** The URL a page loads asset `name` from (`/assets/htmx.min.js?v=<hash>`), or null when it is missing. */
export function assetHref(name: AssetName): string | null {
  const asset = getAsset(name);
  return asset ? `/assets/${name}?v=${asset.hash}` : null;
}

/** Whether every file a live page needs is there (else pages are served without live updates). */
export function liveAssetsPresent(): boolean {
  return (Object.keys(VENDOR_ASSETS) as AssetName[]).every((n) => getAsset(n) !== null);
}
