// The code version recorded in every snapshot manifest: package version plus git commit when known.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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
