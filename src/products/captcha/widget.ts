/**
 * The widget's files (src/products/captcha/widget/, shipped in the package), served at
 * `/widget/<name>` by every adapter and by `seclookup serve`. Read once, on first request.
 * The version is a hash of every file: `api.js` and `frame.html` carry it (the
 * `__WIDGET_VERSION__` placeholder) into the URLs they load, so those are cached for a year and
 * change with any file.
 * Each file has a strong ETag; the frame page gets a strict Content-Security-Policy.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { packageRoot } from '../../lib/datasets.js';
import type { ServiceAsset, ServiceAssets } from '../service.js';

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
};

/** The frame page runs only our own files: no inline code, no eval, no blob: or data: workers. */
export const FRAME_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; worker-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors *";

/**
 * The widget is embedded by other sites' pages, so its files say so, over whatever the app
 * around the API sets (helmet's `Cross-Origin-Resource-Policy: same-origin` would block them):
 * - every file may be loaded cross-origin (CORP), also by a cross-origin-isolated page (COEP);
 * - scripts and styles may be fetched with CORS (`<script crossorigin>`, for SRI);
 * - the frame page isolates itself (COEP), so a cross-origin-isolated page may frame it; its
 *   own subresources are same-origin, so that costs it nothing.
 */
function crossOriginHeaders(extension: string): Record<string, string> {
  const headers: Record<string, string> = { 'cross-origin-resource-policy': 'cross-origin' };
  if (extension === '.html') {
    headers['content-security-policy'] = FRAME_CSP;
    headers['cross-origin-embedder-policy'] = 'require-corp';
  } else headers['access-control-allow-origin'] = '*';
  return headers;
}

/** The files that say the version (`__WIDGET_VERSION__`) in the URLs they load. */
const WITH_VERSION = new Set(['api.js', 'frame.html']);

export function widgetDir(): string {
  return join(packageRoot(), 'src', 'products', 'captcha', 'widget');
}

export function createWidgetAssets(dir: () => string = widgetDir): ServiceAssets {
  let loaded: { version: string; files: Map<string, ServiceAsset> } | undefined;
  function load() {
    if (loaded) return loaded;
    const folder = dir();
    let names: string[];
    try {
      names = readdirSync(folder)
        .filter((name) => TYPES[extname(name)] !== undefined)
        .sort();
    } catch {
      names = []; // not installed with the package: every widget URL is 404
    }
    const raw = names.map((name) => [name, readFileSync(join(folder, name))] as const);
    const all = createHash('sha256');
    for (const [name, bytes] of raw) all.update(name).update('\0').update(bytes).update('\0');
    const version = all.digest('hex').slice(0, 12);
    const files = new Map<string, ServiceAsset>();
    for (const [name, bytes] of raw) {
      // api.js and frame.html name the files they load at this version (cached for good, and never a stale one after an upgrade).
      const body = WITH_VERSION.has(name) ? Buffer.from(bytes.toString('utf8').replaceAll('__WIDGET_VERSION__', version)) : bytes;
      files.set(name, {
        contentType: TYPES[extname(name)],
        body,
        etag: `"${createHash('sha256').update(body).digest('hex').slice(0, 24)}"`,
        headers: { 'x-content-type-options': 'nosniff', ...crossOriginHeaders(extname(name)) },
      });
    }
    return (loaded = { version, files });
  }
  return {
    mount: '/widget/',
    version: () => load().version,
    file: (name) => load().files.get(name),
  };
}
