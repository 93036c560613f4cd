// The flags of settings, made from the settings table: their help, and their values handed to the
// config by setting name (in process: no CLI started).
import { describe, expect, it } from 'vitest';
import { Command } from 'commander';
import { settingsFromFlags, withSettings } from '../../cli/options.ts';
import { UserError } from '../../lib/errors.ts';
import type { FlagSet } from '../../lib/settings/define.ts';

/** A command with the flags of these sets, parsed from `args`. */
function parsed(args: string[], ...sets: FlagSet[]): Command {
  const cmd = withSettings(new Command('t').exitOverride(), ...sets);
  return cmd.parse(args, { from: 'user' });
}

describe('flags of settings', () => {
  it('say their variable and default in their help', () => {
    const help = withSettings(new Command('t'), 'collect', 'warehouse').options.map((o) => `${o.flags}: ${o.description}`);
    expect(help).toEqual([
      '--port <port>: port (env COLLECTOR_PORT, default 3001)',
      '--host <host>: interface (env COLLECTOR_HOST, else HOST, default 127.0.0.1)',
      "--spool <dir>: this collector's own spool folder (env COLLECTOR_SPOOL_DIR, default <warehouse>/spool/<host>-<port>)",
      '--metrics-port <port>: serve GET /metrics (Prometheus) on this port of METRICS_HOST (env COLLECTOR_METRICS_PORT; default: none)',
      '--warehouse <dir>: warehouse folder (env WAREHOUSE_DIR, default ./data)',
    ]);
  });

  it('hand their values over by setting name, checked by its schema', () => {
    const cmd = parsed(['--concurrency', '4', '--grace-seconds', '2.5', '--warehouse', 'wh'], 'worker', 'warehouse', 'redis');
    expect(settingsFromFlags(cmd)).toEqual({ WORKER_CONCURRENCY: 4, WORKER_SHUTDOWN_GRACE_SECONDS: 2.5, WAREHOUSE_DIR: 'wh' });
    // The same flag stands for another setting on another command.
    expect(settingsFromFlags(parsed(['--port', '0'], 'collect'))).toEqual({ COLLECTOR_PORT: 0 });
    expect(settingsFromFlags(parsed(['--port', '0'], 'serve'))).toEqual({ PORT: 0 });
  });

  it('refuse a bad value naming the flag', () => {
    expect(() => settingsFromFlags(parsed(['--concurrency', '0'], 'worker'))).toThrow(new UserError('--concurrency: greater than 0'));
    expect(() => settingsFromFlags(parsed(['--redis', 'localhost:6379'], 'redis'))).toThrow(/^--redis: a redis:\/\/ or rediss:\/\/ URL/);
  });
});
