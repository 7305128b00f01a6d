/**
 * Plain HTTP servers on loopback for tests that need a server misbehaving on purpose (a proxy's
 * page, a cut answer, a reset): each `listen(handler)` starts one and gives its URL; `close()`
 * destroys their open sockets (keep-alive, hung requests) and closes them all.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface LoopbackHttpServers {
  listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string>;
  close(): Promise<void>;
}

export function createLoopbackHttpServers(): LoopbackHttpServers {
  const servers: Server[] = [];
  const sockets = new Set<Socket>();
  return {
    async listen(handler) {
      const server = createServer(handler);
      server.on('connection', (socket) => (sockets.add(socket), socket.on('close', () => sockets.delete(socket))));
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    },
  };
}
