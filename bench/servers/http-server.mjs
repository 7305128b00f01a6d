/**
 * A bench target, run as a child of bench/http.ts:
 * `node http-server.mjs <node|express|fastify> <bare|seclookup> [sqlite|memory] [BODY_FILE]` or
 * `node http-server.mjs node bare-post`. A bare server answers with BODY_FILE's bytes when given
 * (the routes bench: the very bytes the seclookup server answers), else a small hello JSON.
 * `bare` answers every GET with a small JSON on the plain framework; `bare-post` reads and
 * parses a request's JSON body first; `seclookup` mounts the API
 * (built package in dist/) with a SQLite (default) or in-memory meter and an unlimited key. It listens on a free loopback
 * port and prints one JSON line, `{ "port": ..., "key": ... }`, then serves until SIGTERM.
 */
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [adapter, mode, meterKind = 'sqlite', bodyFile] = process.argv.slice(2);
const HELLO = bodyFile ? readFileSync(bodyFile, 'utf8') : JSON.stringify({ success: true, hello: 'world' });
const cleanups = [];

async function seclookupApi() {
  const { createApi, createLookup, createMemoryMeter, issueKeys } = await import('../../dist/index.js');
  const { createSqliteMeter } = await import('../../dist/sqlite.js');
  const dir = mkdtempSync(join(tmpdir(), 'seclookup-bench-'));
  const meter = meterKind === 'memory' ? createMemoryMeter() : createSqliteMeter(join(dir, 'meter.db'));
  cleanups.push(
    () => meter.close(),
    () => rmSync(dir, { recursive: true, force: true }),
  );
  // Enterprise-like, but with no ceiling a bench could reach.
  await meter.setPlan({ slug: 'bench', product: '*', rateLimitPerMinute: 1_000_000_000, monthlyQuota: null });
  const { secretKey } = await issueKeys(meter, { product: 'useragent', plan: 'bench' });
  return { api: createApi({ lookup: createLookup(), meter }), key: secretKey };
}

async function listenNode(handler) {
  const server = createServer(handler);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.unshift(() => server.close());
  return server.address().port;
}

const SERVERS = {
  async node(sec) {
    if (mode === 'bare-post') {
      // Reads and parses the JSON body of a POST, as the API must, then answers.
      return listenNode((req, res) => {
        const chunks = [];
        req.on('data', (chunk) => chunks.push(chunk));
        req.on('end', () => {
          JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
          res.writeHead(200, { 'content-type': 'application/json' }).end(HELLO);
        });
      });
    }
    if (!sec) return listenNode((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(HELLO));
    const { createListener } = await import('../../dist/node.js');
    return listenNode(createListener(sec.api));
  },
  async express(sec) {
    const { default: express } = await import('express');
    const app = express();
    if (sec) app.use((await import('../../dist/express.js')).seclookup({ api: sec.api }));
    else app.get('*splat', (_req, res) => res.type('application/json').send(HELLO));
    return listenNode(app);
  },
  async fastify(sec) {
    const { default: Fastify } = await import('fastify');
    const app = Fastify();
    if (sec) app.register((await import('../../dist/fastify.js')).seclookup, { api: sec.api });
    else app.get('/*', async (_request, reply) => reply.type('application/json').send(HELLO));
    await app.listen({ port: 0, host: '127.0.0.1' });
    cleanups.unshift(() => app.close());
    return app.server.address().port;
  },
};

if (
  !(adapter in SERVERS) ||
  (mode !== 'bare' && mode !== 'seclookup' && !(mode === 'bare-post' && adapter === 'node')) ||
  (meterKind !== 'sqlite' && meterKind !== 'memory')
) {
  console.error('usage: http-server.mjs <node|express|fastify> <bare|seclookup> [sqlite|memory], or node bare-post');
  process.exit(2);
}
const sec = mode === 'seclookup' ? await seclookupApi() : null;
const port = await SERVERS[adapter](sec);
process.stdout.write(JSON.stringify({ port, key: sec?.key ?? null }) + '\n');

process.once('SIGTERM', async () => {
  for (const cleanup of cleanups) await cleanup();
  process.exit(0);
});
