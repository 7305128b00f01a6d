/**
 * A raw HTTP/1.1 client for transport tests: it writes exactly the bytes given (pipelined,
 * malformed, cut short) over a real socket and parses whatever comes back.
 */
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: string;
}

export interface RawExchange {
  responses: RawResponse[];
  /** The server ended or reset the connection (rather than the wait running out). */
  closedByServer: boolean;
  /** Bytes after the last complete response (a response cut short, or garbage). */
  leftover: string;
}

export interface ExchangeOptions {
  /** Stop (and close our side) once this many responses are complete. */
  responses?: number;
  /** Give up after this long and report what arrived. @default 4000 */
  waitMs?: number;
}

/** Open a connection; the caller writes and must destroy it. Resolves once connected. */
export function openSocket(port: number, host = '127.0.0.1'): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host, () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/**
 * Send `bytes` in one write on a new connection, then collect the answers until the server
 * closes the connection, `options.responses` answers are complete, or the wait runs out. The
 * socket is always destroyed before this resolves.
 */
export async function exchange(port: number, bytes: string | Buffer, options: ExchangeOptions = {}): Promise<RawExchange> {
  const socket = await openSocket(port);
  socket.write(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes);
  return collect(socket, options);
}

/** Collect answers from an open socket (see `exchange`), then destroy it. */
export function collect(socket: Socket, options: ExchangeOptions = {}): Promise<RawExchange> {
  const waitMs = options.waitMs ?? 4000;
  return new Promise((resolve) => {
    let received = Buffer.alloc(0);
    let settled = false;
    const finish = (closedByServer: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...parseResponses(received), closedByServer });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
      if (options.responses !== undefined && parseResponses(received).responses.length >= options.responses) finish(false);
    });
    // A reset after the answers is still the server closing; the answers already read count.
    socket.on('error', () => finish(true));
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
  });
}

/** Split a byte stream into complete responses (Content-Length or chunked bodies). */
export function parseResponses(bytes: Buffer): { responses: RawResponse[]; leftover: string } {
  const responses: RawResponse[] = [];
  let offset = 0;
  for (;;) {
    const headEnd = bytes.indexOf('\r\n\r\n', offset);
    if (headEnd === -1) break;
    const [statusLine, ...lines] = bytes.toString('latin1', offset, headEnd).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const body = readBody(bytes, headEnd + 4, headers);
    if (!body) break;
    responses.push({ status: Number(statusLine.split(' ')[1]), headers, body: body.text });
    offset = body.end;
  }
  return { responses, leftover: bytes.toString('latin1', offset) };
}

function readBody(bytes: Buffer, start: number, headers: Record<string, string>): { text: string; end: number } | null {
  if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
    let text = '';
    let at = start;
    for (;;) {
      const lineEnd = bytes.indexOf('\r\n', at);
      if (lineEnd === -1) return null;
      const size = parseInt(bytes.toString('latin1', at, lineEnd), 16);
      if (size === 0) return bytes.length >= lineEnd + 4 ? { text, end: lineEnd + 4 } : null;
      if (bytes.length < lineEnd + 2 + size + 2) return null;
      text += bytes.toString('utf8', lineEnd + 2, lineEnd + 2 + size);
      at = lineEnd + 2 + size + 2;
    }
  }
  const length = Number(headers['content-length'] ?? 0);
  if (bytes.length < start + length) return null;
  return { text: bytes.toString('utf8', start, start + length), end: start + length };
}

/** `{ json }` of a body, or `{ text }` when it is not JSON. */
export function jsonOf(response: RawResponse): Record<string, any> {
  try {
    return JSON.parse(response.body) as Record<string, any>;
  } catch {
    return { unparsed: response.body };
  }
}

/** One chunked-encoding frame per piece, then the last (empty) chunk. */
export function chunked(pieces: readonly string[]): string {
  return pieces.map((piece) => `${Buffer.byteLength(piece).toString(16)}\r\n${piece}\r\n`).join('') + '0\r\n\r\n';
}

/** The bytes of a GET with a bearer key, for writing (or pipelining) on a raw socket. */
export function rawGet(path: string, key: string): string {
  return `GET ${path} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${key}\r\n\r\n`;
}
