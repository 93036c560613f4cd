// The portal's script and stylesheet: bundled once per process by esbuild (the portal's client
// code and uPlot, minified), named by a hash of their bytes so that browsers keep them for a year,
// and gzip'd once. Public: they hold no tenant's data.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { PROJECT_ROOT } from '../lib/version.ts';

export interface Asset {
  name: string;
  type: string;
  body: Buffer;
  gzip: Buffer;
}

export interface PortalAssets {
  script: Asset;
  style: Asset;
  byName: ReadonlyMap<string, Asset>;
}

const CLIENT_ENTRY = path.join(PROJECT_ROOT, 'portal', 'client', 'main.ts');
const STYLES = [path.join(PROJECT_ROOT, 'node_modules', 'uplot', 'dist', 'uPlot.min.css'), path.join(PROJECT_ROOT, 'portal', 'client', 'portal.css')];

function asset(stem: string, ext: string, type: string, body: Buffer): Asset {
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 12);
  return { name: `${stem}.${hash}.${ext}`, type, body, gzip: gzipSync(body, { level: 9 }) };
}

async function bundleScript(): Promise<Buffer> {
  const out = await build({
    entryPoints: [CLIENT_ENTRY],
    bundle: true,
    minify: true,
    format: 'iife',
    target: 'es2020',
    write: false,
    legalComments: 'none',
    logLevel: 'silent',
  });
  return Buffer.from(out.outputFiles[0]!.contents);
}

async function joinStyles(): Promise<Buffer> {
  return Buffer.concat(await Promise.all(STYLES.map((f) => fs.readFile(f))));
}

let made: Promise<PortalAssets> | null = null;

/** The assets, made on first use and kept for the process's life. */
export function portalAssets(): Promise<PortalAssets> {
  made ??= (async () => {
    const [js, css] = await Promise.all([bundleScript(), joinStyles()]);
    const script = asset('portal', 'js', 'application/javascript; charset=utf-8', js);
    const style = asset('portal', 'css', 'text/css; charset=utf-8', css);
    return { script, style, byName: new Map([script, style].map((a) => [a.name, a])) };
  })();
  return made;
}
