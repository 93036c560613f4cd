// Options of CLI commands: the kinds of value flags take (zod schemas over the strings commander
// hands over), and the flags of settings, made from the settings table with their help.
import { Option, type Command } from 'commander';
import { z } from 'zod';
import { isoInstant } from '../lib/time.ts';
import { UserError } from '../lib/errors.ts';
import { SETTING_ENTRIES, SETTINGS, type SettingName } from '../lib/settings/table.ts';
import { constantDefault, overrideSchema, type FlagSet, type FlagSpec, type SettingSpec } from '../lib/settings/define.ts';
import type { SettingOverrides } from '../lib/config.ts';

export { nonNegativeInt, positiveInt, positiveNumber } from '../lib/settings/values.ts';

/** An ISO 8601 date-time with a zone (Z or ±hh:mm) naming a real instant, as a Date (lib/time.ts). */
export const isoDate = isoInstant;

/** The own flags of a command whose flags are all settings' (made by withSettings). */
export const noFlags = z.object({});

/** The setting each option made by withSettings stands for. */
const settingOf = new WeakMap<Option, SettingName>();

/**
 * Add to `cmd` the flags of settings that these sets carry, in the table's order (`warehouse`:
 * every command's --warehouse; `redis`: --redis and --queue-prefix; a command's name: its own).
 */
export function withSettings(cmd: Command, ...sets: FlagSet[]): Command {
  for (const set of sets) {
    for (const [name, spec] of SETTING_ENTRIES) {
      const flag = spec.flags?.[set];
      if (flag === undefined) continue;
      const option = new Option(flag.flag, flagHelp(name, spec, flag));
      settingOf.set(option, name);
      cmd.addOption(option);
    }
  }
  return cmd;
}

/**
 * The settings given as flags to `cmd` or to its parents (`token revoke --warehouse` may be parsed
 * by `token`), each checked by its setting's schema: a bad one is a UserError naming its flag.
 */
export function settingsFromFlags(cmd: Command): SettingOverrides {
  const given = cmd.optsWithGlobals();
  const out: Record<string, unknown> = {};
  for (let c: Command | null = cmd; c !== null; c = c.parent) {
    for (const option of c.options) {
      const name = settingOf.get(option);
      const raw = given[option.attributeName()];
      if (name === undefined || raw === undefined || name in out) continue;
      out[name] = parseFlag(option, overrideSchema(SETTINGS[name] as SettingSpec), raw);
    }
  }
  return out as SettingOverrides;
}

function parseFlag(option: Option, schema: z.ZodType, raw: unknown): unknown {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new UserError(`${option.long}: ${parsed.error.issues[0]!.message}`);
  return parsed.data;
}

/**
 * A flag's help: its text, then "(env NAME, default D)" from the table, or its text with `{env}`
 * and `{default}` replaced where it words them itself.
 */
export function flagHelp(name: string, spec: SettingSpec, flag: FlagSpec): string {
  const fallback = spec.fallback === undefined ? undefined : (SETTINGS[spec.fallback as SettingName] as SettingSpec);
  const shown = spec.shown ?? constantDefault(spec) ?? (fallback && constantDefault(fallback));
  const value = shown === undefined ? undefined : String(shown).replaceAll('`', '');
  if (flag.help.includes('{env}')) return flag.help.replace('{env}', `env ${name}`).replace('{default}', value ?? '');
  const parts = [`env ${name}`, spec.fallback && `else ${spec.fallback}`, value !== undefined && `default ${value}`].filter(Boolean);
  return `${flag.help} (${parts.join(', ')})`;
}
