// A real HTTP receiver of webhooks on 127.0.0.1 for the tests: it keeps every request it gets,
// answers with what the test had set when the request came in (a status, a delay, a redirect),
// and verifies signatures with the Standard Webhooks specification's own library.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  headers: Record<string, string>;
  body: string;
  at: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** How the next requests are answered. */
  answer: { status: number; delayMs: number; headers: Record<string, string> };
  /** The body verified with `secret` (throws when the signature does not verify). */
  verify(r: Received, secret: string): unknown;
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>;
  /** The requests that `match` keeps, once there are `n` of them (throws after `timeoutMs`). */
  waitForMatching(match: (r: Received) => boolean, n: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(port = 0): Promise<Receiver> {
  const received: Received[] = [];
  const answer = { status: 204, delayMs: 0, headers: {} as Record<string, string> };
  const server = http.createServer((req, res) => {
    // The answer as set when the request came in: a test that changes it after its wait returned
    // must not change the answer to a request already received (that answer is written a timer
    // later, and a 503 given to it would have the sender send it again).
    const { status, delayMs, headers: answerHeaders } = { ...answer, headers: { ...answer.headers } };
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      received.push({ headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      setTimeout(() => res.writeHead(status, answerHeaders).end(), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const waitForMatching = async (match: (r: Received) => boolean, n: number, timeoutMs = 60_000): Promise<Received[]> => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const got = received.filter(match);
      if (got.length >= n) return got;
      if (Date.now() > until) throw new Error(`the receiver got ${got.length} requests, not ${n}, within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return {
    url,
    received,
    answer,
    verify: (r, secret) => new Webhook(secret).verify(r.body, r.headers),
    waitFor: (n, timeoutMs) => waitForMatching(() => true, n, timeoutMs),
    waitForMatching,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
