/**
 * The server `adapter-process.ts` starts: `node adapter-process-child.mjs <variant> <app JSON limit>`.
 * It imports the built package by its name (dist/, which `npm test` builds first), as an app
 * does. It prints `{ "port", "secretKey" }` once listening, then each request log event, one JSON
 * line each, and closes on SIGTERM.
 */
import { createServer } from 'node:http';
import { createApi, createLookup, createMemoryMeter, issueKeys } from 'seclookup';

const [variant, appJsonLimit] = process.argv.slice(2);
const meter = createMemoryMeter();
const api = createApi({ lookup: createLookup(), meter, onResponse: (event) => process.stdout.write(`${JSON.stringify(event)}\n`) });
const { secretKey } = await issueKeys(meter, { product: 'useragent' });

let server;
if (variant === 'fastify') {
  const { default: Fastify } = await import('fastify');
  const { seclookup, seclookupClientErrors, seclookupFrameworkErrors } = await import('seclookup/fastify');
  const app = Fastify({ frameworkErrors: seclookupFrameworkErrors(api), clientErrorHandler: seclookupClientErrors(api) });
  app.register(seclookup, { api });
  await app.listen({ port: 0, host: '127.0.0.1' });
  server = app.server;
} else {
  const { default: express } = await import('express');
  const { seclookup } = await import('seclookup/express');
  const { handleClientErrors } = await import('seclookup/node');
  const app = express();
  if (variant === 'express after express.json()') app.use(express.json({ limit: Number(appJsonLimit) }));
  app.use(seclookup({ api }));
  server = handleClientErrors(createServer(app), api);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
}
process.stdout.write(`${JSON.stringify({ port: server.address().port, secretKey })}\n`);
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
