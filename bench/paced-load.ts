// Open-loop load at a steady rate: one request every 1/rate seconds, evenly spaced, over a pool of
// keep-alive connections, each request's latency counted from the moment it was due (not from when
// a connection became free, so a stall is charged to every request it delayed). This is what "50 %
// of the sustained rate" means for a collector whose clients post on their own schedules.
// autocannon's `overallRate` is not that: each connection sends its share of a second back to back
// at the start of every second (a per-second token bucket), so the server is saturated for the
// first part of each second and idle for the rest, and its latency is that of a saturated server.
import http from 'node:http';

export interface PacedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

export interface PacedResult {
  /** Requests answered per second over the run. */
  requestsPerSecond: number;
  p50: number;
  p99: number;
  max: number;
  non2xx: number;
  errors: number;
  /** Requests that could not start on time because every connection was busy. */
  queued: number;
  /** How late this load generator itself was in sending (ms after each request was due): p99 and max. */
  sendLagP99: number;
  sendLagMax: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export async function pacedLoad(url: string, opts: { rate: number; seconds: number; connections: number; requests: PacedRequest[] }): Promise<PacedResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.connections });
  const target = new URL(url);
  const latencies: number[] = [];
  const lags: number[] = [];
  let non2xx = 0;
  let errors = 0;
  let inFlight = 0;
  let queued = 0;
  const send = (req: PacedRequest, dueAt: number) =>
    new Promise<void>((resolve) => {
      if (inFlight >= opts.connections) queued++;
      inFlight++;
      const r = http.request(
        { agent, host: target.hostname, port: target.port, method: req.method, path: req.path, headers: { ...req.headers, 'Content-Length': String(req.body.length) } },
        (res) => {
          res.resume();
          res.on('end', () => {
            latencies.push(performance.now() - dueAt);
            if (res.statusCode === undefined || res.statusCode < 200 || res.statusCode > 299) non2xx++;
            inFlight--;
            resolve();
          });
        },
      );
      r.on('error', () => {
        errors++;
        inFlight--;
        resolve();
      });
      r.end(req.body);
    });

  const total = Math.max(1, Math.round(opts.rate * opts.seconds));
  const interval = 1000 / opts.rate;
  const started = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const dueAt = started + i * interval;
    const wait = dueAt - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    lags.push(performance.now() - dueAt);
    pending.push(send(opts.requests[i % opts.requests.length]!, dueAt));
  }
  await Promise.all(pending);
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  const sorted = latencies.sort((a, b) => a - b);
  const round = (x: number) => Math.round(x * 10) / 10;
  return {
    requestsPerSecond: latencies.length / elapsed,
    p50: round(percentile(sorted, 50)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted[sorted.length - 1] ?? NaN),
    non2xx,
    errors,
    queued,
    sendLagP99: round(percentile(lags.sort((a, b) => a - b), 99)),
    sendLagMax: round(lags[lags.length - 1] ?? NaN),
  };
}
