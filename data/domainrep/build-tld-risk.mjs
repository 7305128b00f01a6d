#!/usr/bin/env node
/**
 * Builds data/domainrep/tld-risk.json from the bundled copies in data/domainrep/sources/:
 *
 *   listed   = MetaMask eth-phishing-detect `blacklist` + polkadot-js/phishing `deny`
 *              (allowlists win: MetaMask `whitelist`, equal or parent; polkadot `allow`, exact);
 *   baseline = willwhite/freemail `free.txt`: 4,466 long-standing, legitimate domains.
 *
 * Every name is reduced to its registrable domain under the ICANN section of the public suffix
 * list (tldts); names under a private suffix (pages.dev, vercel.app, github.io: a hosting
 * platform's customers, not registrations at the TLD's registry) are left out of the counts,
 * and each registrable domain counts once. A TLD's lift is its share of listed domains over its
 * share of baseline domains, both with add-one smoothing over the TLDs seen:
 *
 *   lift = ((listed_t + 1) / (listed + K)) / ((baseline_t + 1) / (baseline + K))
 *
 * and its weight is round(3 * log2(lift)) clamped to 0..15. TLDs with fewer than MIN_LISTED
 * listed domains are left out of the table: the engine treats them as neutral (weight 0).
 *
 * Run from the repository root: `node data/domainrep/build-tld-risk.mjs` (needs tldts from
 * node_modules). Deterministic: the same sources give the same file.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'tldts';

const HERE = dirname(fileURLToPath(import.meta.url));
const SOURCES = join(HERE, 'sources');
export const MIN_LISTED = 25;
const ALPHA = 1;
const MAX_WEIGHT = 15;
const SCALE = 3;

const PHISHING = join(HERE, '..', 'phishing');
const metamask = JSON.parse(readFileSync(join(PHISHING, 'metamask', 'config.json'), 'utf8'));
const polkadot = JSON.parse(readFileSync(join(PHISHING, 'polkadot', 'all.json'), 'utf8'));
const freemail = readFileSync(join(SOURCES, 'free-email-domains.txt'), 'utf8').split('\n').map((l) => l.trim()).filter(Boolean);

const clean = (name) => String(name).trim().toLowerCase().replace(/\.$/, '');
const whitelist = new Set(metamask.whitelist.map(clean));
const polkadotAllow = new Set(polkadot.allow.map(clean));

function allowed(name) {
  if (polkadotAllow.has(name)) return true;
  for (let at = name; ; ) {
    if (whitelist.has(at)) return true;
    const dot = at.indexOf('.');
    if (dot < 0) return false;
    at = at.slice(dot + 1);
  }
}

/** The ICANN registrable domain and TLD of a host, or a reason it is left out. */
function registrable(name) {
  if (!/^[a-z0-9.-]+$/.test(name)) return { skip: 'not a hostname (URL path, wildcard or non-ASCII)' };
  const withPrivate = parse(name, { allowPrivateDomains: true, extractHostname: false });
  if (withPrivate.isIp) return { skip: 'IP address' };
  if (withPrivate.isPrivate) return { skip: 'under a private suffix (hosting platform)' };
  if (withPrivate.isIcann !== true || !withPrivate.domain) return { skip: 'no registrable domain under a known ICANN suffix' };
  const suffix = withPrivate.publicSuffix;
  return { domain: withPrivate.domain, tld: suffix.slice(suffix.lastIndexOf('.') + 1) };
}

function countByTld(names, skipped, filter = () => true) {
  const seen = new Set();
  const counts = new Map();
  for (const raw of names) {
    const name = clean(raw);
    if (!filter(name)) {
      skipped.set('allowlisted', (skipped.get('allowlisted') ?? 0) + 1);
      continue;
    }
    const r = registrable(name);
    if (r.skip) {
      skipped.set(r.skip, (skipped.get(r.skip) ?? 0) + 1);
      continue;
    }
    if (seen.has(r.domain)) continue;
    seen.add(r.domain);
    counts.set(r.tld, (counts.get(r.tld) ?? 0) + 1);
  }
  return { counts, total: seen.size };
}

const listedSkipped = new Map();
const listed = countByTld([...metamask.blacklist, ...polkadot.deny], listedSkipped, (name) => !allowed(name));
const baselineSkipped = new Map();
const baseline = countByTld(freemail, baselineSkipped);

const tlds = new Set([...listed.counts.keys(), ...baseline.counts.keys()]);
const K = tlds.size;
const rows = [];
for (const tld of [...listed.counts.keys()].sort()) {
  const count = listed.counts.get(tld);
  if (count < MIN_LISTED) continue;
  const base = baseline.counts.get(tld) ?? 0;
  const share = (count + ALPHA) / (listed.total + ALPHA * K);
  const baseShare = (base + ALPHA) / (baseline.total + ALPHA * K);
  const lift = share / baseShare;
  const weight = Math.max(0, Math.min(MAX_WEIGHT, Math.round(SCALE * Math.log2(lift))));
  rows.push({ tld, listed: count, baseline: base, share: round(count / listed.total, 5), lift: round(lift, 2), weight });
}
rows.sort((a, b) => b.weight - a.weight || b.listed - a.listed || a.tld.localeCompare(b.tld));

const out = {
  generated: '2026-11-23',
  method:
    'lift = ((listed_t + 1) / (listed + K)) / ((baseline_t + 1) / (baseline + K)); weight = clamp(round(3 * log2(lift)), 0, 15); ' +
    `TLDs with fewer than ${MIN_LISTED} listed registrable domains are neutral (not in the table). See data/domainrep/SOURCES.md.`,
  sources: {
    listed: 'MetaMask eth-phishing-detect src/config.json blacklist (2023-08-31, DBAD licence) + polkadot-js/phishing all.json deny (2026-02-03, Apache-2.0); allowlists applied',
    baseline: 'willwhite/freemail data/free.txt (2020-07-03, ISC licence)',
  },
  listed_domains: listed.total,
  baseline_domains: baseline.total,
  tlds_seen: K,
  min_listed: MIN_LISTED,
  listed_skipped: Object.fromEntries([...listedSkipped].sort()),
  tlds: rows,
};
writeFileSync(join(HERE, 'tld-risk.json'), JSON.stringify(out, null, 1).replace(/\n {2,}/g, ' ').replace(/\n \}/g, ' }') + '\n');
console.log(`tld-risk.json: ${rows.length} TLDs (${rows.filter((r) => r.weight > 0).length} with weight > 0) from ${listed.total} listed and ${baseline.total} baseline registrable domains`);

function round(value, digits) {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
