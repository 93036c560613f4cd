// The pilot-report benchmark's static-file line: a bare node:http server that answers each path by
// reading its file from disk on every request (as a static host does), with the headers the real
// API sent. Usage: static-file-server.ts FILES.json, where FILES.json maps each path to
// { file, headers } (prints its URL on stdout).
import http from 'node:http';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';

interface StaticFile {
  file: string;
  headers: Record<string, string>;
}

const files = new Map(Object.entries(JSON.parse(fs.readFileSync(process.argv[2]!, 'utf8')) as Record<string, StaticFile>));

const server = http.createServer((req, res) => {
  const f = files.get(req.url ?? '');
  if (!f) {
    res.writeHead(404).end();
    return;
  }
  fs.readFile(f.file, (err, bytes) => {
    if (err) {
      res.writeHead(500).end();
      return;
    }
    res.writeHead(200, { ...f.headers, 'Content-Length': bytes.length });
    res.end(bytes);
  });
});
server.keepAliveTimeout = 5_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
