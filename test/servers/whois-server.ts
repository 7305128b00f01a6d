/**
 * A loopback WHOIS (port-43 protocol, RFC 3912) server for the whois tests: reads one query
 * line, answers from a table (a sample from test/fixtures/whois, any text, or a behaviour),
 * and closes. It may listen on several loopback addresses with one port (127.0.0.1 as the
 * registry, 127.0.0.2 as a registrar named by a referral), and answers by address and query.
 * Hostile behaviours: never answers, closes without a word, sends without end, drips one byte
 * a second.
 *
 * @example
 * const server = await startWhoisServer({ answer: (query) => (query === 'example.jp/e' ? whoisAnswer.text('...') : whoisAnswer.sample('no-match')) });
 */
import { readFileSync } from 'node:fs';
import net, { type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';

export type WhoisBehaviour =
  | { kind: 'text'; text: string | Buffer }
  | { kind: 'hang' }
  | { kind: 'close' }
  | { kind: 'endless' }
  | { kind: 'drip'; text: string };

export interface WhoisServerOptions {
  /** What to answer a query (the line without CRLF) arriving on `localAddress`. */
  answer(query: string, localAddress: string): WhoisBehaviour;
  /** Loopback addresses to listen on, all with the same port. @default ['127.0.0.1'] */
  hosts?: string[];
}

export interface WhoisTestServer {
  port: number;
  /** `127.0.0.1:PORT` (the first host), the form whois server options take. */
  address: string;
  /** Queries received, in order: `{ host, query }`. */
  queries: { host: string; query: string }[];
  close(): Promise<void>;
}

const SAMPLES = join(import.meta.dirname, '../fixtures/whois/whois');

export const whoisAnswer = {
  text: (text: string | Buffer): WhoisBehaviour => ({ kind: 'text', text }),
  /** A raw answer from test/fixtures/whois/whois/<name>. */
  sample: (name: string): WhoisBehaviour => ({ kind: 'text', text: readFileSync(join(SAMPLES, name)) }),
  hang: (): WhoisBehaviour => ({ kind: 'hang' }),
  close: (): WhoisBehaviour => ({ kind: 'close' }),
  endless: (): WhoisBehaviour => ({ kind: 'endless' }),
  drip: (text = 'Domain Name: example.test\n'): WhoisBehaviour => ({ kind: 'drip', text }),
};

export async function startWhoisServer(options: WhoisServerOptions): Promise<WhoisTestServer> {
  const hosts = options.hosts ?? ['127.0.0.1'];
  const queries: { host: string; query: string }[] = [];
  const sockets = new Set<Socket>();

  const handle = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buffered = '';
    let answered = false;
    socket.on('data', (chunk: Buffer) => {
      if (answered) return;
      buffered += chunk.toString('latin1');
      const end = buffered.indexOf('\n');
      if (end < 0) return;
      answered = true;
      const query = buffered.slice(0, end).replace(/\r$/, '');
      const host = socket.localAddress?.replace(/^::ffff:/, '') ?? '';
      queries.push({ host, query });
      behave(socket, options.answer(query, host));
    });
  };

  const servers: net.Server[] = [];
  let port = 0;
  for (const host of hosts) {
    const server = net.createServer(handle);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    port = (server.address() as AddressInfo).port;
    servers.push(server);
  }
  return {
    port,
    address: `${hosts[0]}:${port}`,
    queries,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    },
  };
}

function behave(socket: Socket, behaviour: WhoisBehaviour): void {
  switch (behaviour.kind) {
    case 'text':
      socket.end(behaviour.text);
      return;
    case 'hang':
      return;
    case 'close':
      socket.end();
      return;
    case 'endless': {
      const line = Buffer.from('Domain Status: ok https://icann.org/epp#ok\r\n'.repeat(400));
      const pump = () => {
        while (!socket.destroyed && socket.write(line));
        if (!socket.destroyed) socket.once('drain', pump);
      };
      pump();
      return;
    }
    case 'drip': {
      let i = 0;
      const timer = setInterval(() => {
        if (socket.destroyed || i >= behaviour.text.length) return clearInterval(timer);
        socket.write(behaviour.text[i++]);
      }, 1_000);
      socket.on('close', () => clearInterval(timer));
      return;
    }
  }
}
