// Small control documents (tenants, origins...): JSON files in the warehouse's control area,
// validated by a schema on read and on write, replaced atomically, and updated under a lock so
// that concurrent writers in any process never lose each other's changes.
import fs from 'node:fs/promises';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import type { z } from 'zod';
import { writeJsonDurable } from '../lib/fsx.ts';
import { describeZodError, InternalError } from '../lib/errors.ts';
import { StampedReads } from '../lib/stamped-reads.ts';

export class ControlDocumentError extends InternalError {
  override name = 'ControlDocumentError';
  override readonly errorCode = 'control_document_invalid';
}

/** Read a document; `empty` when it does not exist yet. */
export async function readDocument<S extends z.ZodType>(file: string, schema: S, empty: z.infer<S>): Promise<z.infer<S>> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return empty;
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ControlDocumentError(`${path.basename(file)} is not valid JSON`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new ControlDocumentError(`${path.basename(file)} is invalid: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

/** Parsed documents, each kept under the stamp of the file it was read from. */
const parsed = new StampedReads<unknown>();

/**
 * `readDocument` for hot read paths (an API request): the parsed document is kept while the file's
 * inode, size and times are unchanged, so a read costs one stat. Any replacement (atomic rename,
 * new inode) or edit in place shows up at once. The value is shared: callers must not modify it.
 */
export async function readDocumentCached<S extends z.ZodType>(file: string, schema: S, empty: z.infer<S>): Promise<Readonly<z.infer<S>>> {
  try {
    return (await parsed.read(file, () => readDocument(file, schema, empty))) as z.infer<S>;
  } catch (err) {
    // Only the stat can fail so: readDocument answers `empty` for a file gone since.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    parsed.forget(file);
    return empty;
  }
}

/** Writers of this process, one queue per document: the file lock then only sees other processes. */
const queues = new Map<string, Promise<unknown>>();

function inProcessQueue<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const previous = queues.get(file) ?? Promise.resolve();
  const run = previous.then(fn, fn);
  const tail = run.catch(() => {});
  queues.set(file, tail);
  void tail.then(() => {
    if (queues.get(file) === tail) queues.delete(file);
  });
  return run;
}

/**
 * Read-modify-write a document under its lock. `change` gets the current value and returns the
 * new one (validated before it is written) and a result for the caller, or throws to write nothing.
 * The value written is kept as the file's parse (readDocumentCached reads it without parsing).
 * `shared`: `change` gets the parse readDocumentCached keeps (one stat when the file is unchanged
 * since it was read or written), which it must not modify.
 */
export function updateDocument<S extends z.ZodType, R>(
  file: string,
  schema: S,
  empty: z.infer<S>,
  change: (current: z.infer<S>) => { next: z.infer<S>; result: R } | Promise<{ next: z.infer<S>; result: R }>,
  options: { shared?: boolean } = {},
): Promise<R> {
  return inProcessQueue(file, () => lockedUpdate(file, schema, empty, change, options.shared === true));
}

async function lockedUpdate<S extends z.ZodType, R>(
  file: string,
  schema: S,
  empty: z.infer<S>,
  change: (current: z.infer<S>) => { next: z.infer<S>; result: R } | Promise<{ next: z.infer<S>; result: R }>,
  shared: boolean,
): Promise<R> {
  // Control data is private to the service's user: folders 0700, files 0600 (docs/architecture.md, principle 5).
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const release = await lockfile.lock(file, {
    realpath: false,
    stale: 10_000,
    retries: { retries: 200, minTimeout: 10, maxTimeout: 200 },
  });
  try {
    const current = shared ? ((await readDocumentCached(file, schema, empty)) as z.infer<S>) : await readDocument(file, schema, empty);
    const { next, result } = await change(current);
    const checked = schema.safeParse(next);
    if (!checked.success) throw new ControlDocumentError(`refusing to write an invalid ${path.basename(file)}: ${describeZodError(checked.error)}`);
    await writeJsonDurable(file, checked.data, { mode: 0o600 });
    // Every writer holds the lock: the file is what was just written (a new object of zod's, held by no caller).
    await parsed.remember(file, checked.data);
    return result;
  } finally {
    await release();
  }
}

/**
 * Make the control area private (folders 0700, files 0600), whatever an older version or a hand
 * edit left: run once at a service's start. Lock folders of proper-lockfile are left as they are.
 */
export async function secureControlArea(controlDir: string): Promise<void> {
  await fs.mkdir(controlDir, { recursive: true, mode: 0o700 });
  async function walk(dir: string): Promise<void> {
    await fs.chmod(dir, 0o700);
    for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
      const p = path.join(dir, entry.name);
      if (entry.isDirectory() && !entry.name.endsWith('.lock')) await walk(p);
      else if (entry.isFile()) await fs.chmod(p, 0o600).catch(() => {});
    }
  }
  await walk(controlDir);
}
