// Prometheus metrics of this process (prom-client): one registry, Node's process metrics added
// once a server or worker starts, and a small listener that serves them on an address of their
// own (the API's METRICS_PORT, `worker --metrics-port`): nothing else is reachable there.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import client from 'prom-client';

export const registry = new client.Registry();

let processMetrics = false;

/** Add the process metrics (CPU, memory, event loop lag, GC), once per process. */
export function collectProcessMetrics(): void {
  if (processMetrics) return;
  processMetrics = true;
  client.collectDefaultMetrics({ register: registry, prefix: 'p2ptel_' });
}

export const METRICS_CONTENT_TYPE = registry.contentType;

export function metricsText(): Promise<string> {
  return registry.metrics();
}

export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

/** Serve GET /metrics (and nothing else) on its own port; `port` 0 picks a free one. */
export async function listenMetrics(port: number, host: string): Promise<MetricsListener> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    metricsText().then(
      (text) => res.writeHead(200, { 'Content-Type': METRICS_CONTENT_TYPE, 'Cache-Control': 'no-store' }).end(text),
      () => res.writeHead(500, { 'Content-Type': 'text/plain' }).end('metrics failed\n'),
    );
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const h = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${h}:${addr.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
