// Reading a rendered Markdown report back, as a reader would: sections, subsections, tables and
// their cells (a '|' escaped with a backslash is part of a cell, not a border).
import { expect } from 'vitest';

export const lines = (md: string) => md.split('\n');

/** The text under each `## ` heading, up to the next one. */
export function sectionsOf(md: string): Map<string, string> {
  const out = new Map<string, string>();
  let current: string | null = null;
  for (const line of lines(md)) {
    if (line.startsWith('## ')) out.set((current = line.slice(3)), '');
    else if (current !== null) out.set(current, `${out.get(current)!}${line}\n`);
  }
  return out;
}

/** The text of a `### ` subsection inside a section. */
export function subsection(text: string, title: string): string {
  const start = text.indexOf(`### ${title}\n`);
  expect(start, `subsection ${title}`).toBeGreaterThanOrEqual(0);
  const rest = text.slice(start + title.length + 5);
  const end = rest.indexOf('\n### ');
  return end < 0 ? rest : rest.slice(0, end);
}

export const cellsOf = (line: string) =>
  line
    .trim()
    .replace(/^\|/, '')
    .replace(/(?<!\\)\|$/, '')
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());
export const unescape = (cell: string) => cell.replace(/\\([\\`*_[\]<>|~&#])/g, '$1');

/** The body rows of the Markdown table whose header row starts with `header`, as cells. */
export function table(text: string, header: string): string[][] {
  const all = lines(text);
  const at = all.findIndex((l) => l.startsWith(`| ${header} |`));
  expect(at, `table "${header}"`).toBeGreaterThanOrEqual(0);
  expect(all[at + 1]).toMatch(/^\|(?:\s*:?-+:?\s*\|)+$/);
  const rows: string[][] = [];
  for (let i = at + 2; i < all.length && all[i]!.startsWith('|'); i++) rows.push(cellsOf(all[i]!));
  return rows;
}

/** The row of a two-column table whose first cell is `label`. */
export const row = (rows: string[][], label: string) => {
  const r = rows.find((x) => x[0] === label);
  expect(r, `row ${label}`).toBeDefined();
  return r!;
};
