/**
 * A small round-robin load balancer for bench/scale.ts: a TCP proxy on a free loopback port that
 * hands each new connection to the next backend in turn (as an L4 balancer does), so keep-alive
 * HTTP connections spread evenly over the `seclookup serve` instances.
 *
 *   node bench/servers/round-robin.mjs 127.0.0.1:8081 127.0.0.1:8082 ...
 *
 * Prints `{"port":N}` on stdout once listening.
 */
import net from 'node:net';

const backends = process.argv.slice(2).map((address) => {
  const [host, port] = address.split(':');
  return { host, port: Number(port) };
});
let next = 0;

const server = net.createServer((client) => {
  const backend = backends[next++ % backends.length];
  const upstream = net.connect(backend.port, backend.host);
  client.setNoDelay(true);
  upstream.setNoDelay(true);
  client.pipe(upstream).pipe(client);
  const close = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', close);
  upstream.on('error', close);
  client.on('close', close);
  upstream.on('close', close);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
