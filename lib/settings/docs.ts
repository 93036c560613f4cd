// The docs' tables of settings (README's configuration, docs/jobs.md's worker tier), written from
// the settings table between markers by `npm run docs:settings`; test/lib/settings.test.ts fails
// when a file lags.
import path from 'node:path';
import { PROJECT_ROOT } from '../version.ts';
import { constantDefault, type SettingSpec } from './define.ts';
import { AREAS } from './table.ts';

/** The files that hold a generated table of settings. */
export const SETTINGS_DOCS = ['README.md', 'docs/jobs.md'].map((f) => path.join(PROJECT_ROOT, f));

/** `<!-- settings [areas]: … -->`, the generated tables, `<!-- /settings -->`; no area named: every area. */
const SECTION = /(<!-- settings((?: [a-z]+)*):[^>]*-->\n)[\s\S]*?(<!-- \/settings -->)/g;

/** A document with each of its sections of settings written again. */
export function withSettingsTables(doc: string): string {
  return doc.replace(SECTION, (_all, begin: string, areas: string, end: string) => `${begin}${settingsTables(areas.trim().split(' ').filter(Boolean))}\n${end}`);
}

/** One table per area (all when `ids` is empty), in the table's order. */
export function settingsTables(ids: readonly string[] = []): string {
  const areas = AREAS.filter((a) => ids.length === 0 || ids.includes(a.id));
  return areas
    .map((area) => {
      const rows = Object.entries(area.settings).map(([name, spec]) => row(name, spec as SettingSpec));
      return [`**${area.title}**`, '', '| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
    })
    .join('\n\n');
}

function row(name: string, spec: SettingSpec): string {
  return `| \`${name}\` | ${defaultCell(spec)} | ${spec.doc}${flagsNote(spec)} |`;
}

function defaultCell(spec: SettingSpec): string {
  if (spec.shown !== undefined) return spec.shown;
  if (spec.fallback !== undefined) return `\`${spec.fallback}\``;
  const value = constantDefault(spec);
  if (value === undefined) return '(none)';
  return typeof value === 'string' ? `\`${value}\`` : String(value);
}

/** " (`serve --port`, `start --port`)": the flags that set it (a group's without a command). */
function flagsNote(spec: SettingSpec): string {
  const flags = Object.entries(spec.flags ?? {}).map(([set, f]) => {
    const flag = f.flag.split(' ')[0];
    return set === 'warehouse' || set === 'redis' ? `\`${flag}\`` : `\`${set} ${flag}\``;
  });
  return flags.length === 0 ? '' : ` (${flags.join(', ')})`;
}
