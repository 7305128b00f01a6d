/**
 * What the HTTP benches share: autocannon's programmatic API, typed (it ships no types), and
 * stopping the server processes a bench started.
 */
import type { ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';

export interface CannonRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** The part of autocannon's result the benches read. */
export interface CannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
  '4xx': number;
  latency: { p50: number; p99: number };
}

export type Autocannon = (options: {
  url: string;
  connections: number;
  duration?: number;
  /** A number of requests to send instead of a duration. */
  amount?: number;
  /** Seconds a request may take (autocannon's default: 10). */
  timeout?: number;
  headers?: Record<string, string>;
  method?: string;
  body?: string;
  requests?: CannonRequest[];
}) => Promise<CannonResult>;

export const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

/** SIGTERM each child that still runs, SIGKILL it after `graceMs`; resolves once all have exited. */
export async function stopAll(children: readonly ChildProcess[], graceMs = 3_000): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
          child.once('exit', () => {
            clearTimeout(force);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
}
