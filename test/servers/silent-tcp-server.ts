/**
 * A TCP server on 127.0.0.1 that accepts and never speaks: a host whose TLS handshake or WHOIS
 * answer never comes. It counts the connections it accepted and the most open at once (a
 * connection the client closes stops counting when the server sees it close).
 */
import { type AddressInfo, createServer, type Socket } from 'node:net';

export interface SilentServer {
  port: number;
  accepted(): number;
  /** Most connections open at once so far. */
  peakOpen(): number;
  /** Close the oldest connection still open. */
  closeOldest(): void;
  /** Close every connection open, and each one accepted from now on at once. */
  closeAll(): void;
  /** Close every connection and stop listening. */
  close(): Promise<void>;
}

export async function startSilentServer(): Promise<SilentServer> {
  const open: Socket[] = [];
  let accepted = 0;
  let peak = 0;
  let closing = false;
  const forget = (socket: Socket) => {
    const at = open.indexOf(socket);
    if (at !== -1) open.splice(at, 1);
  };
  const drop = (socket: Socket) => {
    forget(socket);
    socket.destroy();
  };
  const server = createServer((socket) => {
    accepted++;
    socket.on('error', () => {});
    if (closing) return void socket.destroy();
    open.push(socket);
    peak = Math.max(peak, open.length);
    socket.on('close', () => forget(socket));
    socket.resume();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    port: (server.address() as AddressInfo).port,
    accepted: () => accepted,
    peakOpen: () => peak,
    closeOldest: () => drop(open[0]),
    closeAll: () => {
      closing = true;
      for (const socket of [...open]) drop(socket);
    },
    close: () => {
      closing = true;
      for (const socket of [...open]) drop(socket);
      return new Promise((done) => server.close(() => done()));
    },
  };
}
