// Shared plumbing of CLI commands: config from flags and env, the logger, job dependencies, and
// turning failures into one clear line and an exit code (progress bars: cli/progress.ts).
import type { Command } from 'commander';
import { ZodError, type z } from 'zod';
import { ConfigError, loadConfig, type AppConfig, type SettingOverrides } from '../lib/config.ts';
import { createLogger, type Logger } from '../lib/log.ts';
import { describeZodError, exitCodeOf, ExitError, UserError } from '../lib/errors.ts';
import type { JobDeps } from '../jobs/deps.ts';
import type { Queues } from '../jobs/queue/client.ts';
import { settingsFromFlags } from './options.ts';
import { terminationSignal } from '../lib/signals.ts';

export interface Runtime {
  config: AppConfig;
  log: Logger;
}

/**
 * The config of a command: its flags over the environment over `defaults` (a command's own, where
 * they differ from the table's); `service` commands (long-running) log at info by default, others
 * at warn.
 */
export function commandConfig(settings: SettingOverrides, kind: 'command' | 'service' = 'command', defaults: Record<string, string> = {}): AppConfig {
  return loadConfig({ overrides: settings, defaults: { LOG_LEVEL: kind === 'service' ? 'info' : 'warn', ...defaults } });
}

/** Config and logger of a command. */
export function runtime(settings: SettingOverrides, kind: 'command' | 'service' = 'command', defaults: Record<string, string> = {}): Runtime {
  const config = commandConfig(settings, kind, defaults);
  return { config, log: createLogger(config.logLevel) };
}

/** Run `fn` with job dependencies opened for the command and closed after. */
export async function withJobDeps<T>(rt: Runtime, fn: (deps: JobDeps) => Promise<T>): Promise<T> {
  // Loaded here, not at the top: `--help` and light commands need no DuckDB.
  const { openJobDeps } = await import('../jobs/deps.ts');
  const deps = await openJobDeps(rt.config, rt.log);
  try {
    return await fn(deps);
  } finally {
    await deps.close();
  }
}

/** Run `fn` with the worker tier's queues (Redis checked first: one line if it is not there). */
export async function withQueues<T>(rt: Runtime, fn: (queues: Queues) => Promise<T>, mode: 'command' | 'service' = 'command'): Promise<T> {
  // Loaded on use: BullMQ and ioredis would add ~150 ms to the start of every command.
  const { openQueues } = await import('../jobs/queue/client.ts');
  const { RedisUnavailableError, redactUrl } = await import('../jobs/queue/connection.ts');
  // 'service': reconnect for as long as it takes (a command that waits must ride out a restart).
  const queues = await openQueues(rt.config.redis, mode, rt.log);
  try {
    return await fn(queues);
  } catch (err) {
    if (queues.client.status === 'end') {
      throw new RedisUnavailableError(`lost the connection to Redis at ${redactUrl(rt.config.redis.url)} (${err instanceof Error ? err.message : String(err)})`);
    }
    throw err;
  } finally {
    await queues.close();
  }
}

/** What a long-running command logs when a second SIGINT or SIGTERM ends it at once. */
export const SECOND_SIGNAL = 'second signal: exiting now, without waiting for the stop to finish';

/**
 * Close a long-running service (the API, a collector) on the first SIGINT or SIGTERM, logging
 * `message` with the signal; resolves once it has closed. A second signal exits at once (0).
 * `signal`: the command's own, when it listens from its first line (start).
 */
export async function closeOnSignals(service: { close(): Promise<void> }, log: Logger, message: string, signal?: Promise<string>): Promise<void> {
  // Listeners kept for the process's life (lib/signals.ts says why a `once` one killed it).
  const heard = await (signal ?? terminationSignal(log, SECOND_SIGNAL));
  log.info({ signal: heard }, message);
  await service.close();
}


/** Wrap a command action: user errors print one line and exit 2, other failures exit 1 (or their ExitError's code). */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (err) {
      process.exitCode = reportError(err);
    }
  };
}

/**
 * A command's work, in its own module under cli/actions/ (loaded only when the command runs): the
 * schema of its own flags, over the strings commander hands over, and `run` with the parsed flags
 * and the settings given as flags (cli/options.ts, withSettings). A command with subcommands
 * exports one such pair per subcommand (`tenants.ts`: `add`, `remove`, `list`). Action modules
 * import nothing from cli/commands/, so types flow one way.
 */
export interface CommandModule<S extends z.ZodType> {
  Flags: S;
  run(flags: z.output<S>, settings: SettingOverrides): Promise<void>;
}

const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/**
 * The commander action of a command: load its module, parse its flags (and its positional
 * arguments, put into the same object under `args`' names, in order) and the settings given as
 * flags, run. A flag that fails its schema is a UserError naming it (`--as-of: …`, `<kind>: …`):
 * one line on stderr, exit 2. Flags come with the parents' (`token revoke --warehouse` may be
 * parsed by `token`).
 */
export function commandAction<S extends z.ZodType>(
  load: () => Promise<CommandModule<S>>,
  args: readonly string[] = [],
): (...commanderArgs: unknown[]) => Promise<void> {
  return action(async (...commanderArgs: unknown[]) => {
    // commander calls an action with the positional arguments, the options, then the command.
    const cmd = commanderArgs.at(-1) as Command;
    const raw: Record<string, unknown> = { ...cmd.optsWithGlobals() };
    args.forEach((name, i) => {
      raw[name] = commanderArgs[i];
    });
    const m = await load();
    const parsed = m.Flags.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const key = issue.path.length > 0 ? String(issue.path[0]) : null;
      const name = key === null ? null : args.includes(key) ? `<${key}>` : `--${kebab(key)}`;
      throw new UserError(name === null ? issue.message : `${name}: ${issue.message}`);
    }
    await m.run(parsed.data, settingsFromFlags(cmd));
  });
}

/** Shows `err` as one line on stderr; its exit code (lib/error-catalogue.ts). */
export function reportError(err: unknown): number {
  process.stderr.write(`error: ${errorLine(err)}\n`);
  return exitCodeOf(err);
}

/** Errors written for a user are shown as they are; anything else in one line, whatever the library put in its message. */
function errorLine(err: unknown): string {
  if (err instanceof ExitError || err instanceof UserError || err instanceof ConfigError) return err.message;
  if (err instanceof ZodError) return describeZodError(err);
  return (err instanceof Error ? err.message : String(err)).replace(/\s*\n\s*/g, ' ');
}
