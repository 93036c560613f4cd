// A `start` process for the portal's browser tests (sample data, its API and collector, the printed
// sign-in link, token and ingest key), reports posted to its collector, and the headless browser
// with a helper that reads a page's tiles.
import fs from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { startLong, type LongCommand } from './long-command.ts';
import { tempDir } from './warehouse.ts';

export interface StartedPortal extends LongCommand {
  warehouse: string;
  url: string;
  collectorUrl: string;
  signInLink: string;
  token: string;
  ingestKey: string;
  stop(): Promise<void>;
}

export async function startPortal(env: Record<string, string> = {}): Promise<StartedPortal> {
  const warehouse = await tempDir('p2ptel-portal-');
  const cmd = await startLong(['start', '--warehouse', warehouse, '--port', '0', '--collector-port', '0'], /session-reports"\n/, env);
  const text = cmd.output();
  const lines = text.split('\n');
  const after = (re: RegExp) => lines[lines.findIndex((l) => re.test(l)) + 1]!.trim();
  return {
    ...cmd,
    warehouse,
    url: /API listening on (\S+)/.exec(text)![1]!,
    collectorUrl: /collector of SDK reports listening on (\S+);/.exec(text)![1]!,
    signInLink: /portal: open (\S+)/.exec(text)![1]!,
    token: after(/its token, valid/),
    ingestKey: after(/ingest key of \S+ \(public, write-only/),
    async stop() {
      if (cmd.child.exitCode === null) {
        const exited = new Promise((r) => cmd.child.once('exit', r));
        cmd.child.kill('SIGTERM');
        await exited;
      }
      await fs.rm(warehouse, { recursive: true, force: true });
    },
  };
}

let counter = 0;

/** Posts one final report of a new session of `streamId` to the collector, stamped now; the collector's answer. */
export async function postReport(p: StartedPortal, streamId: string, fields: Record<string, unknown> = {}): Promise<unknown> {
  const id = `portal-test-${process.pid}-${Date.now()}-${counter++}`;
  const report = {
    reportId: id,
    sessionId: id,
    streamId,
    ts: new Date().toISOString(),
    intervalMs: 30_000,
    seq: 0,
    final: true,
    cohort: 'p2p',
    contentType: 'live',
    bytesOffloaded: 3_000_000,
    bytesFallback: 1_000_000,
    peerCount: 3,
    bufferHealth: 12.5,
    watchMs: 30_000,
    startupMs: 900,
    ...fields,
  };
  const res = await fetch(`${p.collectorUrl}/v1/session-reports`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Ingest-Key': p.ingestKey },
    body: JSON.stringify({ reports: [report] }),
  });
  return res.json();
}

/** The text of each headline tile of the page, by its id (sessions, bytes-p2p, ...). */
export async function tileValues(page: Page): Promise<Record<string, string>> {
  return page.$$eval('[data-figure]', (els) => Object.fromEntries(els.map((e) => [e.getAttribute('data-figure'), e.textContent?.trim() ?? ''])));
}
