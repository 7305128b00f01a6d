/**
 * The whois accuracy corpus (test/fixtures/whois/corpus): real registry port-43 answers, each
 * with an expected JSON beside it, read through the engine's own answer reader and scored.
 * Shared by test/products/whois-corpus.test.ts (floors) and bench/products/whois.ts (figures).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { readWhoisAnswer } from '../../src/products/whois/answer.js';
import { formatInstant } from '../../src/products/whois/dates.js';

export const CORPUS_DIR = join(import.meta.dirname, '../fixtures/whois/corpus');

export type Outcome = 'record' | 'not_found' | 'lookup_failed';
export const FIELDS = ['registrar', 'created_at', 'updated_at', 'expires_at', 'status', 'nameservers'] as const;
export type Field = (typeof FIELDS)[number];

export interface CorpusEntry {
  /** Where the answer comes from: `<repository>@<commit>:<path>`. */
  source: string;
  /** Path of the answer under the corpus directory (`weppos/whois.nic.it/it/status_registered.txt`). */
  path: string;
  text: string;
  server: string;
  tld: string;
  domain?: string;
  outcome: Outcome;
  /** The fields the source asserts (others are not measured). */
  fields: Partial<Record<Field, string | string[] | null>>;
}

function walk(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? walk(path) : [path];
    });
}

export interface Correction {
  ours: string | string[] | null;
  kind: 'expected-wrong' | 'ours-by-design';
  reason: string;
}

/** Hand-checked corrections of expected values (corrections.json), by answer path and field. */
export function loadCorrections(): Record<string, Partial<Record<Field, Correction>>> {
  return (JSON.parse(readFileSync(join(CORPUS_DIR, 'corrections.json'), 'utf8')) as { corrections: Record<string, Partial<Record<Field, Correction>>> })
    .corrections;
}

/**
 * Every answer of the corpus that has an expected JSON (`<case>.txt` + `<case>.json`), with
 * the corrections of corrections.json applied to its expected fields.
 */
export function loadCorpus(): CorpusEntry[] {
  const corrections = loadCorrections();
  const entries: CorpusEntry[] = [];
  for (const source of ['weppos', 'local']) {
    let files: string[];
    try {
      files = walk(join(CORPUS_DIR, source));
    } catch {
      continue;
    }
    for (const file of files.filter((f) => f.endsWith('.txt'))) {
      const expected = JSON.parse(readFileSync(file.replace(/\.txt$/, '.json'), 'utf8')) as Omit<CorpusEntry, 'path' | 'text'>;
      const path = relative(CORPUS_DIR, file);
      const fields = { ...expected.fields };
      for (const [field, correction] of Object.entries(corrections[path] ?? {})) fields[field as Field] = correction.ours;
      entries.push({ ...expected, fields, path, text: readFileSync(file, 'utf8') });
    }
  }
  return entries;
}

export interface Reading {
  outcome: Outcome;
  message?: string;
  fields: Record<Field, string | string[] | null>;
}

/** What the engine makes of an answer. */
export function readEntry(entry: CorpusEntry): Reading {
  const answer = readWhoisAnswer(entry.text, entry.server);
  if (answer.kind === 'not_found') return { outcome: 'not_found', fields: emptyFields() };
  if (answer.kind === 'failed') return { outcome: 'lookup_failed', message: answer.message, fields: emptyFields() };
  const { record } = answer;
  const iso = (ms: number | null) => (ms === null ? null : formatInstant(ms));
  return {
    outcome: 'record',
    fields: {
      registrar: record.registrar,
      created_at: iso(record.createdAt),
      updated_at: iso(record.updatedAt),
      expires_at: iso(record.expiresAt),
      status: record.status,
      nameservers: record.nameservers,
    },
  };
}

function emptyFields(): Record<Field, string | string[] | null> {
  return { registrar: null, created_at: null, updated_at: null, expires_at: null, status: [], nameservers: [] };
}

/** Lists compare as sets (status case-insensitively: registries write `ACTIVE` or `active`). */
export function sameValue(field: Field, expected: unknown, actual: unknown): boolean {
  if (Array.isArray(expected) && Array.isArray(actual)) {
    // Status: EPP URLs are dropped (our rule; weppos keeps them in its newer gTLD fixtures).
    const norm = (list: unknown[]) =>
      [
        ...new Set(
          list.map((v) =>
            String(v)
              .replace(/\s*https?:\/\/\S*$/, '')
              .toLowerCase(),
          ),
        ),
      ]
        .sort()
        .join('\n');
    return norm(expected) === norm(actual);
  }
  if (field === 'registrar' && typeof expected === 'string' && typeof actual === 'string') return expected.replace(/\s+/g, ' ').trim() === actual;
  return expected === actual;
}

export interface Miss {
  path: string;
  what: string;
  expected: unknown;
  actual: unknown;
}

export interface Score {
  answers: number;
  tlds: number;
  byOutcome: Record<Outcome, { total: number; right: number }>;
  byField: Record<Field, { total: number; right: number }>;
  /** Answers expected to be records whose every measured field is right. */
  recordsAllRight: { total: number; right: number };
  misses: Miss[];
}

export function scoreCorpus(entries: CorpusEntry[]): Score {
  const byOutcome = { record: { total: 0, right: 0 }, not_found: { total: 0, right: 0 }, lookup_failed: { total: 0, right: 0 } };
  const byField = Object.fromEntries(FIELDS.map((f) => [f, { total: 0, right: 0 }])) as Score['byField'];
  const recordsAllRight = { total: 0, right: 0 };
  const misses: Miss[] = [];
  for (const entry of entries) {
    const reading = readEntry(entry);
    const outcome = byOutcome[entry.outcome];
    outcome.total++;
    if (reading.outcome === entry.outcome) outcome.right++;
    else
      misses.push({
        path: entry.path,
        what: 'outcome',
        expected: entry.outcome,
        actual: `${reading.outcome}${reading.message ? ` (${reading.message})` : ''}`,
      });
    if (entry.outcome !== 'record') continue;
    recordsAllRight.total++;
    let allRight = reading.outcome === 'record';
    for (const field of FIELDS) {
      if (!(field in entry.fields)) continue;
      byField[field].total++;
      if (sameValue(field, entry.fields[field], reading.fields[field])) byField[field].right++;
      else {
        allRight = false;
        misses.push({ path: entry.path, what: field, expected: entry.fields[field], actual: reading.fields[field] });
      }
    }
    if (allRight) recordsAllRight.right++;
  }
  return { answers: entries.length, tlds: new Set(entries.map((e) => e.tld)).size, byOutcome, byField, recordsAllRight, misses };
}

export const percent = ({ total, right }: { total: number; right: number }) => (total === 0 ? 100 : (100 * right) / total);
