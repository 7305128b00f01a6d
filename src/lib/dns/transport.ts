/**
 * One DNS exchange with one server, over UDP or TCP, inside its deadline. Each UDP query gets
 * its own socket (a fresh random source port, RFC 5452), and an answer counts only if it comes
 * from the server's address and port and carries our id and question; anything else on the
 * socket is ignored, so a spoofed or stray datagram cannot answer for the server.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import { SeclookupError } from '../../errors.js';
import { decodeMessage, WireError, type WireMessage } from './wire.js';
import type { DnsServer } from './servers.js';

export interface Exchange {
  id: number;
  /** The question, to match the answer against: lower-case name, numeric type. */
  name: string;
  type: number;
  query: Buffer;
}

function timeout(server: DnsServer, ms: number, phase = ''): SeclookupError {
  return new SeclookupError('timeout', `DNS server ${server.text} did not answer${phase} within ${ms} ms`);
}

function failed(server: DnsServer, why: string, cause?: unknown): SeclookupError {
  return new SeclookupError('upstream_failed', `DNS server ${server.text}: ${why}`, { cause });
}

/** Errors of this machine, not of the DNS server: out of file descriptors, buffers or memory. */
const LOCAL_ERRORS: ReadonlySet<string> = new Set(['EMFILE', 'ENFILE', 'ENOBUFS', 'ENOMEM']);

/**
 * A socket's error: the server's failure (`upstream_failed`), or, for a local one, a plain Error
 * that the API answers as its own 500 and logs: no DNS server is to blame for it.
 */
function socketFailed(server: DnsServer, error: NodeJS.ErrnoException, transport: 'UDP' | 'TCP'): Error {
  if (error.code && LOCAL_ERRORS.has(error.code))
    return new Error(`cannot open a DNS socket to ${server.text}: ${error.code} (this process is out of file descriptors or memory)`, { cause: error });
  return failed(server, transport === 'TCP' ? `TCP ${error.code ?? error.message}` : (error.code ?? error.message), error);
}

/** Is `message` the answer to `exchange`? */
function answers(message: WireMessage, exchange: Exchange): boolean {
  return message.id === exchange.id && message.question !== null && message.question.type === exchange.type && message.question.name === exchange.name;
}

/** Send the query over UDP and wait up to `timeoutMs` for its answer. */
export function udpExchange(server: DnsServer, exchange: Exchange, timeoutMs: number): Promise<WireMessage> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket(server.family === 6 ? 'udp6' : 'udp4');
    const finish = (error: Error | null, message?: WireMessage) => {
      clearTimeout(timer);
      socket.close();
      if (error) reject(error);
      else resolve(message!);
    };
    const timer = setTimeout(() => finish(timeout(server, timeoutMs)), timeoutMs);
    socket.on('error', (error) => finish(socketFailed(server, error, 'UDP')));
    socket.on('message', (packet, from) => {
      if (from.port !== server.port || from.address !== server.host) return;
      let message: WireMessage;
      try {
        message = decodeMessage(packet);
      } catch (error) {
        // From the server itself, yet unreadable: the server is broken, not worth waiting for.
        return finish(failed(server, `malformed answer (${(error as Error).message})`, error));
      }
      if (answers(message, exchange)) finish(null, message);
    });
    socket.send(exchange.query, server.port, server.host);
  });
}

/** The exchange over TCP (after a truncated UDP answer): 2-byte length framing, RFC 1035 4.2.2. */
export function tcpExchange(server: DnsServer, exchange: Exchange, connectMs: number, totalMs: number): Promise<WireMessage> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: server.host, port: server.port });
    let received = Buffer.alloc(0);
    const finish = (error: Error | null, message?: WireMessage) => {
      clearTimeout(connectTimer);
      clearTimeout(totalTimer);
      socket.destroy();
      if (error) reject(error);
      else resolve(message!);
    };
    const connectTimer = setTimeout(() => finish(timeout(server, connectMs, ' (TCP connect)')), connectMs);
    const totalTimer = setTimeout(() => finish(timeout(server, totalMs, ' over TCP')), totalMs);
    socket.on('connect', () => {
      clearTimeout(connectTimer);
      const frame = Buffer.alloc(2 + exchange.query.length);
      frame.writeUInt16BE(exchange.query.length, 0);
      exchange.query.copy(frame, 2);
      socket.write(frame);
    });
    socket.on('error', (error: NodeJS.ErrnoException) => finish(socketFailed(server, error, 'TCP')));
    socket.on('close', () => finish(failed(server, 'closed the TCP connection before answering')));
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length < 2) return;
      const length = received.readUInt16BE(0);
      if (received.length < 2 + length) return;
      let message: WireMessage;
      try {
        message = decodeMessage(received.subarray(2, 2 + length));
      } catch (error) {
        return finish(failed(server, `malformed answer over TCP (${(error as Error).message})`, error));
      }
      if (!answers(message, exchange)) return finish(failed(server, 'answered a different question over TCP'));
      finish(null, message);
    });
  });
}

export { WireError };
