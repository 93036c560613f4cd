// The Markdown rendering of real pilot reports (generated data, real pipeline, real model): the
// spec's sections in order, blank operator lines, the criteria table, figures checked against
// numbers worked out here from the JSON and the tenant's rates, and escaping of data.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPilotFixture, TENANTS, type PilotFixture } from './fixtures.ts';
import { everyReport, poisoned, SECTIONS } from './cases.ts';
import { cellsOf, lines, row, sectionsOf, subsection, table, unescape } from './markdown-read.ts';
import { renderPilotMarkdown } from '../../pilot/render.ts';
import type { PilotReport } from '../../pilot/model.ts';

let f: PilotFixture;
beforeAll(async () => {
  f = await buildPilotFixture();
});
afterAll(async () => {
  await f?.close();
});

// Independent number formatting: toFixed and a regex for the thousands, not Intl.
const grouped = (s: string) => s.replace(/^(-?\d+)/, (int) => int.replace(/\B(?=(\d{3})+(?!\d))/g, ','));
const fixed = (v: number, digits: number) => grouped(v.toFixed(digits));
const percent = (ratio: number, digits = 1) => `${fixed(ratio * 100, digits)}%`;
const utc = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;

describe('Markdown', () => {
  it('has one title and the sections of the spec, in its order, in every report', () => {
    for (const [name, report] of everyReport(f)) {
      const md = renderPilotMarkdown(report);
      expect(lines(md).filter((l) => /^# /.test(l)), name).toEqual([`# Pilot report: ${report.streamId}`]);
      expect(lines(md).filter((l) => l.startsWith('## ')).map((l) => l.slice(3)), name).toEqual(SECTIONS);
      expect(md, name).not.toMatch(/\bnull\b|\bundefined\b|NaN|Infinity|\[object/);
    }
  });

  it('leaves the operator-judgement lines blank, with lines to write on, at the end of the conclusion, before the signature line', () => {
    for (const [name, report] of everyReport(f)) {
      const all = lines(renderPilotMarkdown(report));
      const claims = all.indexOf('Approved public claims:');
      const signOff = all.indexOf('Final pass/fail sign-off:');
      expect(claims, name).toBeGreaterThan(all.indexOf('## Conclusion'));
      expect(signOff, name).toBeGreaterThan(claims);
      const afterClaims = all.slice(claims + 1, signOff);
      expect(afterClaims.length, name).toBeGreaterThanOrEqual(3);
      expect(afterClaims.every((l) => l === ''), name).toBe(true);
      // Then, as the document's last line, where its signed statement is (pilot/signature-note.ts).
      const signature = all.length - 2;
      expect(all[signature], name).toMatch(/^Signed statement: `[^`]+\.jws` beside this file/);
      expect(all.at(-1), name).toBe('');
      const afterSignOff = all.slice(signOff + 1, signature);
      expect(afterSignOff.length, name).toBeGreaterThanOrEqual(3);
      expect(afterSignOff.every((l) => l === ''), name).toBe(true);
    }
  });

  it('has a criteria table with one row per criterion: threshold, actual and outcome', () => {
    for (const [name, report] of everyReport(f)) {
      const rows = table(sectionsOf(renderPilotMarkdown(report)).get('Conclusion')!, 'Criterion');
      const criteria = report.conclusion.criteria;
      expect(rows.length, name).toBe(criteria.length);
      criteria.forEach((c, i) => {
        const [criterion, threshold, actual, outcome] = rows[i]!;
        expect(unescape(criterion!)).toBe(`${c.id}: ${c.description}`);
        expect(outcome).toBe(c.passed ? 'pass' : '**fail**');
        if (c.id === 'min_sessions') {
          expect(threshold).toBe(`≥ ${grouped(String(c.threshold))}`);
          expect(actual).toBe(grouped(String(c.actual)));
        }
        if (c.id === 'steady_state_offload' || c.id === 'p2p_connection_success') {
          expect(threshold).toBe(`≥ ${percent(c.threshold)}`);
          expect(actual).toBe(c.actual === null ? 'no data' : percent(c.actual));
        }
        if (c.id === 'startup_p95') expect(actual).toBe(c.actual === null ? 'no data' : `${fixed(c.actual, 0)} ms`);
      });
      expect(sectionsOf(renderPilotMarkdown(report)).get('Conclusion')).toContain(`**Automatic assessment: ${report.conclusion.assessment.toUpperCase()}**`);
    }
  });

  it('shows the figures of the report: bytes in GB, ratios in %, money in USD from the tenant\'s rates', () => {
    const report = f.withControl;
    const s = sectionsOf(renderPilotMarkdown(report));
    const results = table(s.get('Results')!, 'Figure');
    expect(row(results, 'Sessions')[1]).toBe(grouped(String(report.results.sessions)));
    expect(row(results, 'From peers (P2P-offloaded)')[1]).toBe(`${fixed(report.results.bytesOffloaded / 1e9, 2)} GB`);
    expect(row(results, 'Offload ratio, aggregate')[1]).toBe(percent(report.results.bytesOffloaded / (report.results.bytesOffloaded + report.results.bytesFallback)));

    // Cost rules 1–4, from the offloaded bytes and the tenant's rates (0.035 USD/GB, 20 %).
    const { cdnPricePerGb, savingsSharePct } = TENANTS['acme']!;
    const gb = report.results.bytesOffloaded / 1e9;
    const avoided = gb * cdnPricePerGb!;
    const fee = (avoided * savingsSharePct) / 100;
    const cost = table(s.get('Cost impact')!, 'Item');
    expect(row(cost, 'Offloaded GB')[1]).toBe(`${fixed(gb, 2)} GB`);
    expect(row(cost, 'CDN price per GB')[1]).toBe('USD 0.035/GB');
    expect(row(cost, 'Avoided CDN cost')[1]).toBe(`USD ${fixed(avoided, 2)}`);
    expect(row(cost, 'Service fee')[1]).toBe(`USD ${fixed(fee, 2)}`);
    expect(row(cost, 'Net savings')[1]).toBe(`USD ${fixed(avoided - fee, 2)}`);
    expect(s.get('Cost impact')).not.toContain('Assumed rate');

    const series = table(subsection(s.get('Results')!, 'Series'), 'Bucket start');
    expect(series).toHaveLength(report.results.series.length);
    series.forEach((cells, i) => {
      const b = report.results.series[i]!;
      expect(cells[0]).toBe(utc(b.start));
      expect(cells[1]).toBe(grouped(String(b.sessions)));
    });
    const peak = report.eventEconomics.peakConcurrency;
    expect(s.get('Event economics')).toContain(`**Peak concurrency:** ${peak.sessions} sessions at ${utc(peak.at!)}`);
  });

  it('compares with the control cohort, with deltas, when one ran', () => {
    const report = f.withControl;
    const p = report.results.cohorts.p2p!;
    const c = report.results.cohorts.control!;
    const rows = table(subsection(sectionsOf(renderPilotMarkdown(report)).get('Results')!, 'Control cohort'), 'Figure');
    expect(rows[0]).toEqual(['Sessions', grouped(String(p.sessions)), grouped(String(c.sessions)), '']);
    const delta = (p.offloadRatio - c.offloadRatio) * 100;
    expect(row(rows, 'Offload ratio')).toEqual(['Offload ratio', percent(p.offloadRatio), percent(c.offloadRatio), `${delta > 0 ? '+' : ''}${delta.toFixed(1)} pp`]);
    const startup = p.startupP95Ms! - c.startupP95Ms!;
    expect(row(rows, 'Startup time p95')[3]).toBe(`${startup > 0 ? '+' : ''}${fixed(startup, 0)} ms`);
  });

  it('says plainly when no control cohort ran, and flags the assumed CDN rate', () => {
    const s = sectionsOf(renderPilotMarkdown(f.withoutControl));
    const control = subsection(s.get('Results')!, 'Control cohort');
    expect(control).toContain('No CDN-only control cohort ran');
    expect(control).not.toContain('|');
    expect(subsection(s.get('Conclusion')!, 'Risks')).toContain('No CDN-only control cohort ran');
    const cost = table(s.get('Cost impact')!, 'Item');
    expect(row(cost, 'CDN price per GB')[1]).toBe('USD 0.02/GB (assumed)');
    expect(s.get('Cost impact')).toContain('**Assumed rate:**');
  });

  it('reads sensibly with one bucket and with no bytes at all', () => {
    const one = sectionsOf(renderPilotMarkdown(f.oneBucket)).get('Results')!;
    expect(table(subsection(one, 'Series'), 'Bucket start')).toHaveLength(1);
    const windows = table(subsection(one, 'Steady state'), 'Window');
    expect(windows.map((w) => w[1])).toEqual([utc(f.oneBucket.results.series[0]!.start), utc(f.oneBucket.results.series[0]!.start)]);

    const zero = sectionsOf(renderPilotMarkdown(f.allZero)).get('Results')!;
    expect(row(table(zero, 'Figure'), 'Offload ratio, steady state')[1]).toBe('no data');
    expect(table(subsection(zero, 'Series'), 'Bucket start').every((cells) => cells[4] === 'no data')).toBe(true);
  });

  it('escapes text from data: it can neither restyle the document nor break a table', () => {
    const hostile: PilotReport = structuredClone(f.withControl);
    hostile.streamId = 'acme:live|<b>*x*</b>';
    hostile.metadata.deviceMix[0]!.device = 'tv|box_`1`';
    hostile.routing.fallbackReasons.unshift({ reason: '[click](javascript:x) & #1\nnext', segments: 1, share: 0 });
    const md = renderPilotMarkdown(hostile);
    expect(md).toContain('# Pilot report: acme:live\\|\\<b\\>\\*x\\*\\</b\\>\n');
    const devices = table(subsection(sectionsOf(md).get('Pilot metadata')!, 'Device mix'), 'Device');
    expect(devices.every((cells) => cells.length === 3)).toBe(true);
    expect(unescape(devices[0]![0]!)).toBe('tv|box_`1`');
    const reasons = table(subsection(sectionsOf(md).get('Routing breakdown')!, 'Fallback reasons'), 'Reason');
    expect(reasons[0]).toHaveLength(3);
    expect(unescape(reasons[0]![0]!)).toBe('[click](javascript:x) & #1 next');
  });

  it('escapes every text from data, wherever it appears', () => {
    const md = renderPilotMarkdown(poisoned(f.withControl));
    expect(md.split('<x-evil').length).toBeGreaterThan(20);
    // Each occurrence is escaped: a backslash before every character that could start markup.
    expect(md).not.toMatch(/(?<!\\)<x-evil/i);
    expect(md).not.toMatch(/[^\\]\|\*_`\[&#/i);
    // Every table row has as many cells as its header: no '|' from data splits a cell.
    const all = lines(md);
    let tables = 0;
    all.forEach((line, i) => {
      if (!/^\|(?:\s*:?-+:?\s*\|)+$/.test(line)) return;
      tables++;
      const width = cellsOf(all[i - 1]!).length;
      for (let j = i + 1; j < all.length && all[j]!.startsWith('|'); j++) expect(cellsOf(all[j]!).length, all[j]).toBe(width);
    });
    expect(tables).toBeGreaterThan(10);
  });
});
