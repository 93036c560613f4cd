// The SQL text of the house (each .sql file beside the code that runs it) and what may be spliced into it: values are
// bound as $params; only `{{placeholders}}` are filled, with file lists, quoted names and code
// constants, never with input.
import fs from 'node:fs';
import path from 'node:path';
import { quotedIdentifier, quotedString } from '@duckdb/node-api';
import { PROJECT_ROOT } from '../../lib/version.ts';

// From the project's root, not this module's folder: compiled, this code is in dist/ (bin/build.js).
/** The folders whose SQL the code runs: each statement lies beside the TypeScript that runs it. */
const SQL_HOMES = ['warehouse', 'api', 'collector', 'pilot', 'jobs', 'billing', 'alerts', 'served'];
const sqlCache = new Map<string, string>();
let sqlPaths: Map<string, string> | null = null;

/** Every .sql file of the code folders by its name (names are unique across the house). */
function sqlPathsByName(): Map<string, string> {
  if (sqlPaths) return sqlPaths;
  const found = new Map<string, string>();
  for (const home of SQL_HOMES) {
    const dir = path.join(PROJECT_ROOT, home);
    if (!fs.existsSync(dir)) continue;
    for (const rel of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
      if (!rel.endsWith('.sql')) continue;
      const name = path.basename(rel, '.sql');
      const file = path.join(dir, rel);
      const other = found.get(name);
      if (other !== undefined) throw new Error(`two SQL files named ${name}.sql: ${other} and ${file}`);
      found.set(name, file);
    }
  }
  sqlPaths = found;
  return found;
}

/** The text of the statement `<name>.sql` (in the room that runs it), read once. */
export function sqlFile(name: string): string {
  let text = sqlCache.get(name);
  if (text === undefined) {
    const file = sqlPathsByName().get(name);
    if (file === undefined) throw new Error(`no SQL file named ${name}.sql`);
    // `{{@other}}` includes other.sql: a rule written once (the deduplication rule) is spliced
    // into every statement that applies it.
    text = fs.readFileSync(file, 'utf8').replace(/\{\{@(\w+)\}\}/g, (_m, other: string) => sqlFile(other).trim());
    sqlCache.set(name, text);
  }
  return text;
}

/** `sql` with each `{{name}}` replaced by `parts[name]` (a placeholder left without a value throws). */
export function fillSql(sql: string, parts: Record<string, string>): string {
  // Placeholders are written <name> in comments, so that only real ones are filled.
  return sql.replace(/\{\{(\w+)\}\}/g, (_m, key: string) => {
    const v = parts[key];
    if (v === undefined) throw new Error(`SQL placeholder {{${key}}} has no value`);
    return v;
  });
}

/**
 * `sql` with its `$bucket_seconds` parameter written as the number `size`: for a statement that
 * holds the same query at several sizes (a parameter has one value per statement).
 */
export function withBucketSeconds(sql: string, size: number): string {
  if (!Number.isSafeInteger(size) || size <= 0) throw new Error(`not a bucket size: ${size}`);
  return sql.replaceAll('$bucket_seconds', String(size));
}

/** A DuckDB list literal of quoted file paths, for `read_parquet` (file lists are resolved at prepare time). */
export function fileList(files: readonly string[]): string {
  if (files.length === 0) throw new Error('empty file list');
  return `[${files.map((f) => quotedString(f)).join(', ')}]`;
}

export { quotedIdentifier, quotedString };
