/**
 * The whois accuracy corpus (test/fixtures/whois/corpus, docs/whois-accuracy.md): real
 * registry answers with their expected values, read through the engine's answer reader.
 * Floors: every field >= 97% exact, unregistered names >= 99% recognised, every refusal a
 * lookup_failed. Also: each collected not-found and refusal form (answer-forms.ts) has a real
 * answer per WHOIS server that it matches, and the corpus is what SOURCES.md says it is.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NOT_FOUND, REFUSED, stripMarkers } from '../../src/products/whois/answer-forms.js';
import { readWhoisAnswer } from '../../src/products/whois/answer.js';
import { CORPUS_DIR, FIELDS, loadCorpus, loadCorrections, percent, scoreCorpus, type CorpusEntry } from './whois-corpus.js';

const corpus = loadCorpus();
const score = scoreCorpus(corpus);
const missesOf = (what: string) => score.misses.filter((miss) => miss.what === what);

describe('the corpus', () => {
  it('holds real answers of more than 100 TLDs: registered, unregistered, reserved, rate-limited', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(700);
    expect(score.tlds).toBeGreaterThanOrEqual(200);
    const kinds = (pattern: RegExp) => corpus.filter((entry) => pattern.test(entry.path)).length;
    expect(kinds(/status_registered/)).toBeGreaterThanOrEqual(200);
    expect(kinds(/status_available/)).toBeGreaterThanOrEqual(200);
    expect(kinds(/reserved/)).toBeGreaterThanOrEqual(15);
    expect(kinds(/throttled/)).toBeGreaterThanOrEqual(15);
  });

  it('records the source of every answer, and the source repository, commit and licence', () => {
    for (const entry of corpus) expect(entry.source, entry.path).toMatch(/^weppos\/whois-parser@bedb4a48b0c9:spec\/fixtures\/responses\//);
    const sources = readFileSync(join(CORPUS_DIR, 'SOURCES.md'), 'utf8');
    expect(sources).toContain('bedb4a48b0c9b28dad1c18e5d2bd0f761642927c');
    expect(sources).toContain('MIT');
    expect(readFileSync(join(CORPUS_DIR, 'weppos/LICENSE'), 'utf8')).toContain('Copyright (c) 2009-2022 Simone Carletti');
  });

  it('corrects expected values only with a reason, on answers that exist', () => {
    for (const [path, fields] of Object.entries(loadCorrections())) {
      expect(existsSync(join(CORPUS_DIR, path)), path).toBe(true);
      for (const correction of Object.values(fields)) expect(correction.reason.length, path).toBeGreaterThan(20);
    }
  });
});

describe('accuracy floors', () => {
  it.each(FIELDS)('%s: at least 97% of the expected values exactly', (field) => {
    const tally = score.byField[field];
    expect(tally.total).toBeGreaterThanOrEqual(70);
    expect(percent(tally), JSON.stringify(missesOf(field).slice(0, 5))).toBeGreaterThanOrEqual(97);
  });

  it('recognises at least 99% of the unregistered names (404 domain_not_found), and reads no registered one as unregistered', () => {
    expect(score.byOutcome.not_found.total).toBeGreaterThanOrEqual(250);
    expect(percent(score.byOutcome.not_found), JSON.stringify(missesOf('outcome'))).toBeGreaterThanOrEqual(99);
    const registeredAsFree = corpus.filter((entry) => entry.outcome === 'record' && readWhoisAnswer(entry.text, entry.server).kind === 'not_found');
    expect(registeredAsFree.map((entry) => entry.path)).toEqual([]);
  });

  it('reads every rate-limited or refused answer as lookup_failed saying so, never as a record or "not found"', () => {
    expect(score.byOutcome.lookup_failed.total).toBeGreaterThanOrEqual(25);
    expect(score.byOutcome.lookup_failed.right).toBe(score.byOutcome.lookup_failed.total);
    const messages = corpus
      .filter((entry) => entry.outcome === 'lookup_failed')
      .map((entry) => {
        const answer = readWhoisAnswer(entry.text, entry.server);
        return answer.kind === 'failed' ? answer.message : answer.kind;
      });
    // The one exception: tonic.to's empty answer (a lone newline), which says nothing at all.
    expect(messages.filter((message) => !message.includes('refused the query ('))).toEqual(['the WHOIS server whois.tonic.to sent an empty answer']);
  });

  it('reads at least 99% of the registered answers as records', () => {
    expect(percent(score.byOutcome.record)).toBeGreaterThanOrEqual(99);
  });
});

describe('the collected answer forms (answer-forms.ts)', () => {
  const byPath = new Map<string, CorpusEntry>(corpus.map((entry) => [entry.path, entry]));
  const cases = (forms: readonly { pattern: RegExp; servers: Readonly<Record<string, string>> }[]) =>
    forms.flatMap((form, index) => Object.entries(form.servers).map(([server, path]) => [index, server, path] as const));

  it.each(cases(NOT_FOUND))('not found #%i: %s (%s)', (index, server, path) => {
    const entry = byPath.get(path);
    expect(entry, path).toBeDefined();
    expect(entry?.server).toBe(server);
    expect(entry?.outcome).toBe('not_found');
    expect(NOT_FOUND[index].pattern.test(stripMarkers(entry?.text ?? ''))).toBe(true);
    expect(readWhoisAnswer(entry?.text ?? '', server)).toEqual({ kind: 'not_found' });
  });

  it.each(cases(REFUSED))('refused #%i: %s (%s)', (index, server, path) => {
    const entry = byPath.get(path);
    expect(entry, path).toBeDefined();
    expect(entry?.server).toBe(server);
    expect(entry?.outcome).toBe('lookup_failed');
    const answer = readWhoisAnswer(entry?.text ?? '', server);
    expect(answer.kind).toBe('failed');
    expect(answer.kind === 'failed' && answer.message).toContain(`refused the query (${REFUSED[index].kind})`);
  });

  it('has a form for every unregistered answer of the corpus and every WHOIS server that sent one', () => {
    const servers = new Set(corpus.filter((entry) => entry.outcome === 'not_found').map((entry) => entry.server));
    const listed = new Set(NOT_FOUND.flatMap((form) => Object.keys(form.servers)));
    expect([...servers].filter((server) => !listed.has(server))).toEqual([]);
  });
});
