// Hot-route load comparison shared by bench:api and bench:serve: autocannon on routes of a running
// API, then, in the same run, on a bare node:http server answering the identical bytes
// (bench/bare-server.ts) and on a minimal Koa + @koa/router app doing the same
// (bench/koa-floor-server.ts). Each server runs in its own process.
//
// The machine is shared, so one measurement says little: each route is measured in several rounds,
// each round loading the three servers one after the other (in a rotating order, so that a drift of
// the machine's load does not always fall on the same server). A ratio is taken within each round
// (servers measured seconds apart); the report gives the median ratio and the spread (min–max)
// over the rounds. Besides req/s, each server's CPU time per request (user + system, from
// /proc/<pid>/stat) is reported: it depends less than req/s on how much of the machine the server
// got (a loaded machine still inflates it).
import fs from 'node:fs/promises';
import path from 'node:path';
import { describeRatio, median } from './report.ts';
import { type LoadResult, loadInChild as loadUrl, startChild, stopChild } from './servers.ts';

interface Figures {
  rps: number;
  p99: number;
  /** CPU time of the server per request, µs (null when its pid is not known). */
  cpuUsPerRequest: number | null;
}

interface Spread {
  median: number;
  min: number;
  max: number;
}

export interface HotRouteResult {
  route: string;
  /** Medians over the rounds. */
  ours: Figures;
  bare: Figures;
  koaFloor: Figures;
  /** API / bare req/s: median over the rounds, and its spread. */
  rpsRatio: number;
  rpsRatioSpread: Spread;
  p99Ratio: number;
  /** API / minimal Koa req/s: median over the rounds, and its spread. */
  koaRatio: number;
  koaRatioSpread: Spread;
  /** Minimal Koa / API CPU per request (≥ 0.8 means the API costs at most 1.25× the floor's CPU). */
  koaCpuRatio: number | null;
  rounds: { ours: Figures; bare: Figures; koaFloor: Figures }[];
}

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const USER_HZ = 100;

/** User + system CPU seconds of a process so far, or null when /proc cannot tell. */
export async function cpuSeconds(pid: number | undefined): Promise<number | null> {
  if (pid === undefined) return null;
  try {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces), from field 3 on.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / USER_HZ;
  } catch {
    return null;
  }
}

const spreadOf = (xs: number[]): Spread => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });
const fmtSpread = (s: Spread) => `${s.median.toFixed(2)}× (rounds ${s.min.toFixed(2)}–${s.max.toFixed(2)})`;
const fmtCpu = (f: Figures) => (f.cpuUsPerRequest === null ? '' : `, ${Math.round(f.cpuUsPerRequest)} µs CPU/req`);

export async function compareHotRoutes(opts: {
  apiUrl: string;
  /** The API's process, for its CPU time per request. */
  apiPid?: number | undefined;
  token: string;
  routes: string[];
  dir: string;
  connections: number;
  duration: number;
  runs: number;
  /** Node flags of the two baseline servers (a CPU profile of each, to compare with the API's). */
  nodeFlags?: string[];
}): Promise<{ results: HotRouteResult[]; lines: string[] }> {
  const canned: Record<string, { status: number; headers: Record<string, string>; body: string }> = {};
  for (const route of opts.routes) {
    const res = await fetch(`${opts.apiUrl}${route}`, { headers: { Authorization: `Bearer ${opts.token}` } });
    if (res.status !== 200) throw new Error(`${route}: ${res.status}`);
    const headers: Record<string, string> = {};
    for (const h of ['content-type', 'etag', 'last-modified', 'cache-control', 'x-content-type-options']) headers[h] = res.headers.get(h)!;
    canned[route] = { status: 200, headers, body: Buffer.from(await res.arrayBuffer()).toString('base64') };
  }
  const cannedFile = path.join(opts.dir, 'canned-responses.json');
  await fs.writeFile(cannedFile, JSON.stringify(canned));
  const bare = await startChild(opts.dir, ['bin/run-ts.js', 'bench/bare-server.ts', cannedFile], /^(http:\S+)/m, {}, opts.nodeFlags);
  const koaFloor = await startChild(opts.dir, ['bin/run-ts.js', 'bench/koa-floor-server.ts', cannedFile], /^(http:\S+)/m, {}, opts.nodeFlags);

  /** One load on one server, with its CPU time per request. */
  const measure = async (url: string, pid: number | undefined): Promise<Figures & Pick<LoadResult, 'non2xx'>> => {
    const before = await cpuSeconds(pid);
    const r = await loadUrl(url, { connections: opts.connections, duration: opts.duration, token: opts.token });
    const after = await cpuSeconds(pid);
    const cpuUsPerRequest = before === null || after === null || r.requests === 0 ? null : ((after - before) * 1e6) / r.requests;
    return { rps: r.rps, p99: r.p99, non2xx: r.non2xx, cpuUsPerRequest };
  };

  const results: HotRouteResult[] = [];
  const lines: string[] = [];
  try {
    for (const route of opts.routes) {
      const servers = [
        { name: 'ours', url: `${opts.apiUrl}${route}`, pid: opts.apiPid },
        { name: 'bare', url: `${bare.url}${route}`, pid: bare.child.pid },
        { name: 'koaFloor', url: `${koaFloor.url}${route}`, pid: koaFloor.child.pid },
      ] as const;
      for (const s of servers) await loadUrl(s.url, { connections: opts.connections, duration: Math.min(3, opts.duration), token: opts.token }); // warm-up
      const rounds: HotRouteResult['rounds'] = [];
      for (let i = 0; i < opts.runs; i++) {
        const round: Partial<Record<(typeof servers)[number]['name'], Figures>> = {};
        for (let j = 0; j < servers.length; j++) {
          const s = servers[(i + j) % servers.length]!;
          const { non2xx, ...f } = await measure(s.url, s.pid);
          if (non2xx > 0) throw new Error(`${s.name}: ${non2xx} non-2xx answers on ${route}`);
          round[s.name] = f;
        }
        const r = round as Record<(typeof servers)[number]['name'], Figures>;
        rounds.push({ ours: r.ours, bare: r.bare, koaFloor: r.koaFloor });
        process.stderr.write(
          `${route} round ${i + 1}: API ${Math.round(r.ours.rps)} req/s p99 ${r.ours.p99} ms${fmtCpu(r.ours)}; ` +
            `bare ${Math.round(r.bare.rps)} req/s p99 ${r.bare.p99} ms${fmtCpu(r.bare)}; ` +
            `minimal Koa ${Math.round(r.koaFloor.rps)} req/s p99 ${r.koaFloor.p99} ms${fmtCpu(r.koaFloor)}\n`,
        );
      }
      const med = (pick: (r: HotRouteResult['rounds'][number]) => Figures): Figures => {
        const xs = rounds.map(pick);
        const cpu = xs.map((x) => x.cpuUsPerRequest).filter((x): x is number => x !== null);
        return { rps: median(xs.map((x) => x.rps)), p99: median(xs.map((x) => x.p99)), cpuUsPerRequest: cpu.length === xs.length ? median(cpu) : null };
      };
      const ours = med((r) => r.ours);
      const base = med((r) => r.bare);
      const floor = med((r) => r.koaFloor);
      const rpsRatioSpread = spreadOf(rounds.map((r) => r.ours.rps / r.bare.rps));
      const koaRatioSpread = spreadOf(rounds.map((r) => r.ours.rps / r.koaFloor.rps));
      const p99Ratio = median(rounds.map((r) => r.ours.p99 / Math.max(r.bare.p99, 1)));
      const koaCpuRatio = ours.cpuUsPerRequest !== null && floor.cpuUsPerRequest !== null ? floor.cpuUsPerRequest / ours.cpuUsPerRequest : null;
      results.push({
        route,
        ours,
        bare: base,
        koaFloor: floor,
        rpsRatio: rpsRatioSpread.median,
        rpsRatioSpread,
        p99Ratio,
        koaRatio: koaRatioSpread.median,
        koaRatioSpread,
        koaCpuRatio,
        rounds,
      });
      lines.push(
        `  ${route}`,
        `    API  ${Math.round(ours.rps)} req/s, p99 ${ours.p99} ms${fmtCpu(ours)}   bare node:http  ${Math.round(base.rps)} req/s, p99 ${base.p99} ms${fmtCpu(base)}`,
        `    minimal Koa + router, same bytes: ${Math.round(floor.rps)} req/s, p99 ${floor.p99} ms${fmtCpu(floor)}`,
        `    req/s, API / bare: ${fmtSpread(rpsRatioSpread)}; ${describeRatio('p99, API / bare', p99Ratio, 2)}`,
        `    req/s, API / minimal Koa: ${fmtSpread(koaRatioSpread)}: ${describeRatio('median', koaRatioSpread.median, 0.8, false)}`,
        ...(koaCpuRatio === null ? [] : [`    CPU per request, minimal Koa / API: ${koaCpuRatio.toFixed(2)}× (the same goal in CPU time; less skewed by the machine's load than req/s, but not immune to it)`]),
      );
    }
  } finally {
    await Promise.all([stopChild(bare), stopChild(koaFloor)]);
  }
  return { results, lines };
}
