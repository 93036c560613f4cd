// The API benchmark's baseline: a bare node:http server that answers each path with the exact
// status, headers and bytes the real API returned for it, with no Koa, no auth and no lookup
// beyond one Map. Usage: bare-server.ts RESPONSES.json (prints its URL on stdout).
import http from 'node:http';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';

interface Canned {
  status: number;
  headers: Record<string, string>;
  body: string; // base64
}

const canned = JSON.parse(fs.readFileSync(process.argv[2]!, 'utf8')) as Record<string, Canned>;
const responses = new Map(Object.entries(canned).map(([path, c]) => [path, { ...c, bytes: Buffer.from(c.body, 'base64') }]));

const server = http.createServer((req, res) => {
  const r = responses.get(req.url ?? '');
  if (!r) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(r.status, { ...r.headers, 'Content-Length': r.bytes.length });
  res.end(r.bytes);
});
server.keepAliveTimeout = 5_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
