/**
 * The bench's TLS server in a child process, so the server's half of every handshake is not
 * spent on the bench's event loop: an ECDSA P-256 certificate for `*.bench.test` (a fixture
 * from test/servers/tls-server.ts) on 127.0.0.1.
 * Protocol (IPC): receives `{}`, answers `{ port }` once listening, exits on disconnect.
 */
import { mintCertificate, startTlsServer } from '../../test/servers/tls-server.js';

process.once('message', async () => {
  const certificate = mintCertificate({ subject: 'bench.test', dnsNames: ['bench.test', '*.bench.test'] });
  const server = await startTlsServer({ certificate });
  process.send!({ port: server.port });
  process.once('disconnect', () => void server.close());
});
