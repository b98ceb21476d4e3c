import { readdirSync, readFileSync, statSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { extname, join } from 'node:path';

/** Where the dashboard is served: `/ui/` (docs/operator-api.md, "Dashboard"). */
export const UI_PREFIX = '/ui/';

const TYPES: Readonly<Record<string, string>> = Object.freeze({
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.ico': 'image/x-icon',
});

/**
 * The dashboard's Content-Security-Policy: its own scripts, styles and API only (nothing inline,
 * nothing from another origin, never framed).
 */
export const UI_CSP: string =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

interface Asset {
  readonly bytes: Buffer;
  readonly type: string;
}

/**
 * The dashboard's files, read once from `dir` (the top level only, files whose type is known): a
 * request can only ever name one of them, so nothing outside `dir` is reachable.
 */
export class StaticUi {
  readonly #assets = new Map<string, Asset>();

  constructor(dir: string) {
    for (const name of readdirSync(dir)) {
      const type = TYPES[extname(name)];
      const path = join(dir, name);
      if (type === undefined || !statSync(path).isFile()) continue;
      this.#assets.set(name, { bytes: readFileSync(path), type });
    }
    if (!this.#assets.has('index.html')) throw new Error(`${dir}: no index.html (is the dashboard built?)`);
  }

  /** The file names served. */
  names(): string[] {
    return [...this.#assets.keys()].sort();
  }

  /**
   * Answers a GET of `path` (below {@link UI_PREFIX}); `/ui/` and any unknown name without an
   * extension get `index.html`. False when there is no such file (the caller answers 404).
   */
  serve(path: string, res: ServerResponse): boolean {
    let name = path.slice(UI_PREFIX.length);
    if (name === '' || (!name.includes('.') && !name.includes('/'))) name = 'index.html';
    const asset = this.#assets.get(name);
    if (asset === undefined) return false;
    res.writeHead(200, {
      'content-type': asset.type,
      'content-length': asset.bytes.length,
      'cache-control': name === 'index.html' ? 'no-store' : 'no-cache',
      'content-security-policy': UI_CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
    });
    res.end(asset.bytes);
    return true;
  }
}
