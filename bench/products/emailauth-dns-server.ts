/**
 * The bench's DNS server in a child process: the test server (test/servers/dns-server.ts)
 * spends a good part of a millisecond of CPU per answer in dns2's encoder, so sharing the
 * bench's event loop it would be most of what a cold lookup measures.
 * Protocol (IPC): receives the zone, answers `{ address }` once listening, exits on disconnect.
 */
import { startDnsServer, type Zone } from '../../test/servers/dns-server.js';

process.once('message', async (zone: Zone) => {
  const server = await startDnsServer({ zone });
  process.send!({ address: server.address });
  process.once('disconnect', () => void server.close());
});
