// The code version recorded in every snapshot manifest: package version plus git commit when known.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The project's folder, one up from this module's: from the sources this module is lib/version.ts,
 * compiled it is a file of dist/, which holds every compiled file directly (bin/build.js sees to
 * it). Files read at run time (warehouse/sql, templates, config, package.json) are found from here.
 */
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

let cached: string | undefined;

export function codeVersion(): string {
  if (cached !== undefined) return cached;
  const pkg = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string };
  let commit = '';
  try {
    commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 2000,
    })
      .toString()
      .trim();
  } catch {
    // Not a git checkout (an installed package): the package version alone.
  }
  cached = commit ? `${pkg.version}+${commit}` : pkg.version;
  return cached;
}
