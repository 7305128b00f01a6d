/**
 * The domainrep bench's DNS server in a child process (as emailauth's: dns2's encoder costs a
 * good part of a millisecond per answer), with hour-long positive and negative TTLs so that
 * results stay cached while the bench fills and reads them.
 * Protocol (IPC): receives the zone, answers `{ address }` once listening, exits on disconnect.
 */
import { startDnsServer, type Zone } from '../../test/servers/dns-server.js';

process.once('message', async (zone: Zone) => {
  const server = await startDnsServer({ zone, defaultTtl: 3_600, negativeTtl: 3_600 });
  process.send!({ address: server.address });
  process.once('disconnect', () => void server.close());
});
