/** Addresses read from the bundled riskscore data (never hard-coded), for the riskscore tests. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundledDataDir } from '../../src/lib/datasets.js';

const file = (path: string) => readFileSync(join(bundledDataDir(), 'riskscore', path), 'utf8');
/** Read once per test file: 120,000 lines, asked for by every sample list a test builds. */
let counts: Map<string, number> | undefined;
const ipsumCounts = (): Map<string, number> =>
  (counts ??= new Map(
    file('abuse/ipsum.txt')
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => {
        const [ip, n] = l.split('\t');
        return [ip, Number(n)];
      }),
  ));

/** A Tor exit IPv4 address that IPsum does not list (its verdict is then `anonymizer`). */
export function torExitIPv4(): string {
  const ipsum = ipsumCounts();
  const rows = file('tor/tor-exits.csv')
    .split('\n')
    .slice(1)
    .map((l) => l.split(',').map((f) => f.trim())[1])
    .filter(Boolean);
  return rows.find((ip) => !ip.includes(':') && !ipsum.has(ip))!;
}

/** The first address of the first datacenter CIDR plus one. */
export function datacenterIPv4(): string {
  const [net] = file('hosting-vpn/datacenter-ipv4.txt').split('\n')[0].split('/');
  const o = net.split('.').map(Number);
  return `${o[0]}.${o[1]}.${o[2]}.${o[3] + 1}`;
}

/** An address inside the first Apple Private Relay IPv4 range. */
export function appleRelayIPv4(): string {
  const [net] = file('apple-private-relay/ipv4.txt').split('\n')[0].split('/');
  return net;
}

/** The IPsum address on the most lists, and its count. */
export function topIpsum(): { ip: string; count: number } {
  let top: [string, number] = ['', -1];
  for (const entry of ipsumCounts()) if (entry[1] > top[1]) top = entry;
  return { ip: top[0], count: top[1] };
}
