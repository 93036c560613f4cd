// Shared output of the benchmarks: medians, ratio lines against a goal, and a JSON record of
// every run under bench/output/.
import fs from 'node:fs/promises';
import path from 'node:path';
import { PROJECT_ROOT } from '../lib/version.ts';

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** "label: 1.12× (goal ≤ 1.5×: met)" */
export function describeRatio(label: string, ratio: number, goal: number, lowerIsBetter = true): string {
  const met = lowerIsBetter ? ratio <= goal : ratio >= goal;
  return `${label}: ${ratio.toFixed(2)}× (goal ${lowerIsBetter ? '≤' : '≥'} ${goal}×: ${met ? 'met' : 'NOT met'})`;
}

export async function writeResult(name: string, result: unknown): Promise<string> {
  const dir = path.join(PROJECT_ROOT, 'bench', 'output');
  await fs.mkdir(dir, { recursive: true });
  const file = path.join(dir, `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  await fs.writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
  return file;
}
