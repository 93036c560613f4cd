// The ingest benchmark's baseline: a bare node:http server that reads each body, gunzips it,
// JSON.parses it and answers 202 with the count, storing nothing (no Koa, no key, no validation,
// no spool). Usage: bare-ingest-server.ts (prints its URL on stdout).
import http from 'node:http';
import { gunzip } from 'node:zlib';
import type { AddressInfo } from 'node:net';

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    gunzip(Buffer.concat(chunks), (err, body) => {
      if (err) {
        res.writeHead(400).end();
        return;
      }
      const parsed = JSON.parse(body.toString('utf8')) as { reports: unknown[] };
      const answer = `{"accepted":${parsed.reports.length},"rejected":[]}`;
      res.writeHead(202, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(answer) });
      res.end(answer);
    });
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
