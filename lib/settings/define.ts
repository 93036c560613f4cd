// What an entry of the settings table says (lib/settings/table.ts), and the typed config that the
// table makes: each setting placed at its paths, its type inferred from its schema or conversion.
import { z } from 'zod';

/** Sets of command-line flags: a command's own, or those of a group of commands. */
export type FlagSet =
  /** Every command. */
  | 'warehouse'
  /** The commands that talk to the worker tier. */
  | 'redis'
  | 'serve'
  | 'start'
  | 'collect'
  | 'worker'
  | 'schedule';

/**
 * A setting's flag in one set: its commander spelling and its help. The help ends with
 * "(env NAME, default D)", made from the table, unless it places `{env}` (and `{default}`) itself.
 */
export interface FlagSpec {
  flag: string;
  help: string;
}

/** Other settings' values, by name: what a conversion may combine its own value with. */
export type OtherSettings = Readonly<Record<string, unknown>>;

/** The value a conversion gets: the setting's own, or its fallback's when it is not set. */
type Value<S extends z.ZodType, F> = [F] extends [string] ? NonNullable<z.output<S>> : z.output<S>;

export interface SettingSpec<S extends z.ZodType = z.ZodType, P extends string = string, F extends string | undefined = string | undefined, O = unknown> {
  /** Its values: with `.default()` when it has a default (a value or a function), `.optional()` when not. */
  schema: S;
  /** What it means (README's configuration table). */
  doc: string;
  /** Its default as the docs say it (Markdown), where the value itself would not say it. */
  shown?: string;
  /** Where it goes in the typed config: a dotted path, or several. */
  at: P | readonly P[];
  /** What the config holds, from the value (and, for a few, from other settings'). */
  as?: (value: Value<S, F>, others: OtherSettings) => O;
  /** Another setting whose value it takes when it is not set. */
  fallback?: F;
  /** Its command-line flags, by the set that carries each. */
  flags?: Partial<Record<FlagSet, FlagSpec>>;
}

/** An entry of the table, its types inferred (`as` sees the schema's output). */
export function setting<S extends z.ZodType, P extends string, F extends string | undefined = undefined, O = Value<S, F>>(
  spec: SettingSpec<S, P, F, O>,
): SettingSpec<S, P, F, O> {
  return spec;
}

/** The schema of a value given over the environment (a flag): the setting's, without its default. */
export function overrideSchema(spec: SettingSpec): z.ZodType {
  const s = spec.schema;
  return s instanceof z.ZodDefault ? (s.unwrap() as z.ZodType).optional() : s.optional();
}

/** The default's value when it is a constant of the table (not computed, not described); else undefined. */
export function constantDefault(spec: SettingSpec): unknown {
  if (spec.shown !== undefined || !(spec.schema instanceof z.ZodDefault)) return undefined;
  return spec.schema.def.defaultValue;
}

/** The config of a table: every setting's value (or conversion) at each of its paths. */
export type ConfigOf<T> = Flatten<Merge<{ [K in keyof T]: Placed<T[K]> }[keyof T]>>;

type Placed<E> = E extends SettingSpec<z.ZodType, infer P, infer _F, infer O> ? Nest<P, O> : never;
type Nest<P extends string, V> = P extends `${infer Head}.${infer Rest}` ? { [K in Head]: Nest<Rest, V> } : { [K in P]: V };
type Merge<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
type Flatten<T> = T extends object ? { [K in keyof T]: Flatten<T[K]> } : T;
