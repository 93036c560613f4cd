// Requests that Node's HTTP parser refuses before any of our code runs. A request line and headers
// over Node's limit (16 KiB: a query value of 100 kB, ten thousand filters) is answered as a
// problem like any other bad query (400 request_too_large) rather than Node's bare 431; every
// other parser error gets Node's own answer.
import type { Socket } from 'node:net';
import { PROBLEM_CONTENT_TYPE } from '../lib/http/problem.ts';
import { problems } from '../served/problems.ts';

const TOO_LARGE = (() => {
  const body = JSON.stringify(problems.requestTooLarge().toProblem());
  return (
    'HTTP/1.1 400 Bad Request\r\n' +
    `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`
  );
})();

/** Node's answers (lib/_http_server.js), for the parser errors we leave as they are. */
const NODE_ANSWERS: Readonly<Record<string, string>> = {
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n',
  ERR_HTTP_REQUEST_TIMEOUT: 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n',
};
const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n';

/**
 * Whether a response of this connection has started (a keep-alive connection has answered earlier
 * requests, which is no reason not to answer this one): Node's own check, on its socket's current
 * response.
 */
function responding(socket: Socket): boolean {
  return (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage?.headersSent === true;
}

/** Sockets answered and closing: what the client still sends is read and dropped until it closes. */
const answered = new WeakSet<Socket>();
/** How long a client that was answered may keep sending before its connection is cut. */
const LINGER_MS = 2_000;

/**
 * The server's 'clientError' listener. The answer ends our side of the connection; the rest of
 * the oversized request is still read (and refused again by the parser, ignored here) until the
 * client closes, since closing with unread data would reset the connection before the client read
 * the answer. A client that keeps sending is cut after LINGER_MS.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (answered.has(socket)) return;
  if (!socket.writable || responding(socket)) {
    socket.destroy();
    return;
  }
  answered.add(socket);
  const code = err.code ?? '';
  socket.end(code === 'HPE_HEADER_OVERFLOW' ? TOO_LARGE : Object.hasOwn(NODE_ANSWERS, code) ? NODE_ANSWERS[code]! : BAD_REQUEST);
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}
