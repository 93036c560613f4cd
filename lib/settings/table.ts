// The one table of settings: each setting's environment name, schema and default, meaning, place in
// the typed config and command-line flags. lib/config.ts reads the environment through it, the CLI
// makes its flags from it (cli/options.ts), and README's configuration table is written from it.
import type { z } from 'zod';
import type { ConfigOf, SettingSpec } from './define.ts';
import { CORE } from './core.ts';
import { API } from './api.ts';
import { WORKERS } from './workers.ts';
import { COLLECTOR } from './collector.ts';
import { ALERTS } from './alerts.ts';

/** The settings by area, in the order the docs list them (and commands their flags). */
export const AREAS = [
  { id: 'core', title: 'Every process: the warehouse, the jobs\' DuckDB, snapshots, secrets', settings: CORE },
  { id: 'api', title: 'The API', settings: API },
  { id: 'workers', title: 'The worker tier', settings: WORKERS },
  { id: 'collector', title: 'The collector', settings: COLLECTOR },
  { id: 'alerts', title: 'Alert rules and webhooks', settings: ALERTS },
] as const;

export const SETTINGS = { ...CORE, ...API, ...WORKERS, ...COLLECTOR, ...ALERTS };

export type Settings = typeof SETTINGS;
export type SettingName = keyof Settings;

/** Every setting with its name, in the table's order, each seen as an entry of any table. */
export const SETTING_ENTRIES = Object.entries(SETTINGS) as [SettingName, SettingSpec][];

/** Every setting's value, as its schema outputs it. */
export type SettingValues = { [K in SettingName]: z.output<Settings[K]['schema']> };

/** The typed config: each setting at its place, converted. */
export type AppConfig = ConfigOf<Settings>;
