/**
 * One adapter serving the API in a process of its own, for tests whose clients must not share
 * the server's event loop (a server in the test's own process reads a large upload in step with
 * the client writing it, which hides what a real server does). `startAdapterProcess` runs
 * `adapter-process-child.mjs`, which prints one JSON line `{ "port", "secretKey" }` once
 * listening, then each request log event as a JSON line, and reads those lines.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { RequestLogEvent } from '../../src/api/types.js';

export const ADAPTER_VARIANTS = ['express', 'express after express.json()', 'fastify'] as const;
export type AdapterVariantName = (typeof ADAPTER_VARIANTS)[number];

/** The body limit of the Express app's own JSON parser in the `express after express.json()` variant. */
export const APP_JSON_LIMIT = 64 * 1024;

/** The server: plain JavaScript on the built package, as an app imports it (no TypeScript loader to start). */
const CHILD = fileURLToPath(new URL('./adapter-process-child.mjs', import.meta.url));

export interface AdapterProcess {
  port: number;
  secretKey: string;
  /** The request log so far. */
  logged: RequestLogEvent[];
  stop(): Promise<void>;
}

export async function startAdapterProcess(variant: AdapterVariantName): Promise<AdapterProcess> {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [CHILD, variant, String(APP_JSON_LIMIT)], { stdio: 'pipe' });
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
