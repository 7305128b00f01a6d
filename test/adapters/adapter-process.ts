/**
 * One adapter serving the API in a process of its own, for tests whose clients must not share
 * the server's event loop (a server in the test's own process reads a large upload in step with
 * the client writing it, which hides what a real server does). Run as
 * `node --import tsx test/adapters/adapter-process.ts <variant>`: it prints one JSON line
 * `{ "port", "secretKey" }` once listening, then each request log event as a JSON line.
 *
 * `startAdapterProcess` spawns it and reads those lines.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { RequestLogEvent } from '../../src/api/types.js';

export const ADAPTER_VARIANTS = ['express', 'express after express.json()', 'fastify'] as const;
export type AdapterVariantName = (typeof ADAPTER_VARIANTS)[number];

/** The body limit of the Express app's own JSON parser in the `express after express.json()` variant. */
export const APP_JSON_LIMIT = 64 * 1024;

export interface AdapterProcess {
  port: number;
  secretKey: string;
  /** The request log so far. */
  logged: RequestLogEvent[];
  stop(): Promise<void>;
}

export async function startAdapterProcess(variant: AdapterVariantName): Promise<AdapterProcess> {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), variant], { stdio: 'pipe' });
  const logged: RequestLogEvent[] = [];
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const ready = new Promise<{ port: number; secretKey: string }>((resolve, reject) => {
    let rest = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop()!;
      for (const line of lines) {
        const parsed = JSON.parse(line) as { port?: number; secretKey?: string } & RequestLogEvent;
        if (parsed.port !== undefined) resolve({ port: parsed.port, secretKey: parsed.secretKey! });
        else logged.push(parsed);
      }
    });
    child.once('exit', (code) => reject(new Error(`adapter process exited ${code}: ${stderr}`)));
  });
  const { port, secretKey } = await ready;
  return {
    port,
    secretKey,
    logged,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function serve(variant: AdapterVariantName): Promise<void> {
  const [{ createApi }, { createLookup }, { createMemoryMeter }, { issueKeys }] = await Promise.all([
    import('../../src/api/create-api.js'),
    import('../../src/lookup.js'),
    import('../../src/metering/memory/meter.js'),
    import('../../src/metering/keys.js'),
  ]);
  const meter = createMemoryMeter();
  const api = createApi({ lookup: createLookup(), meter, onResponse: (event) => process.stdout.write(`${JSON.stringify(event)}\n`) });
  const { secretKey } = await issueKeys(meter, { product: 'useragent' });
  let server: Server;
  if (variant === 'fastify') {
    const { default: Fastify } = await import('fastify');
    const { seclookup, seclookupClientErrors, seclookupFrameworkErrors } = await import('../../adapters/fastify.js');
    const app = Fastify({ frameworkErrors: seclookupFrameworkErrors(api), clientErrorHandler: seclookupClientErrors(api) });
    app.register(seclookup, { api });
    await app.listen({ port: 0, host: '127.0.0.1' });
    server = app.server;
  } else {
    const { default: express } = await import('express');
    const { seclookup } = await import('../../adapters/express.js');
    const { handleClientErrors } = await import('../../adapters/node.js');
    const app = express();
    if (variant === 'express after express.json()') app.use(express.json({ limit: APP_JSON_LIMIT }));
    app.use(seclookup({ api }));
    server = handleClientErrors(createServer(app), api);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  }
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port, secretKey })}\n`);
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await serve(process.argv[2] as AdapterVariantName);
