/** The scoring rules: monotone in the evidence (property-tested), and the documented bands and verdicts. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NO_EVIDENCE, intelligenceOf, levelOf, type Evidence } from '../../src/products/riskscore/score.js';
import { atLeast, contains } from '../cheap-expect.js';

const names = fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd'), { maxLength: 3 });
const evidence: fc.Arbitrary<Evidence> = fc.record({
  tor: fc.boolean(),
  vpnRange: fc.boolean(),
  vpnAsn: fc.boolean(),
  vpnServer: fc.boolean(),
  proxy: fc.boolean(),
  relay: fc.boolean(),
  datacenterRange: fc.boolean(),
  datacenterAsn: fc.boolean(),
  hostingAsn: fc.boolean(),
  cloud: names,
  crawler: names,
  monitor: names,
  platform: names,
  ipsumLists: fc.integer({ min: 0, max: 12 }),
  drop: fc.boolean(),
  asnDrop: fc.boolean(),
  reportedAbuse: fc.boolean(),
  dnsblZones: names,
  providerScore: fc.option(fc.integer({ min: 0, max: 100 }), { nil: null }),
});

/** `b` has every piece of evidence `a` has, and maybe more. */
function union(a: Evidence, b: Evidence): Evidence {
  const merge = (x: readonly string[], y: readonly string[]) => [...new Set([...x, ...y])];
  return {
    tor: a.tor || b.tor,
    vpnRange: a.vpnRange || b.vpnRange,
    vpnAsn: a.vpnAsn || b.vpnAsn,
    vpnServer: a.vpnServer || b.vpnServer,
    proxy: a.proxy || b.proxy,
    relay: a.relay || b.relay,
    datacenterRange: a.datacenterRange || b.datacenterRange,
    datacenterAsn: a.datacenterAsn || b.datacenterAsn,
    hostingAsn: a.hostingAsn || b.hostingAsn,
    cloud: merge(a.cloud, b.cloud),
    crawler: merge(a.crawler, b.crawler),
    monitor: merge(a.monitor, b.monitor),
    platform: merge(a.platform, b.platform),
    ipsumLists: Math.max(a.ipsumLists, b.ipsumLists),
    drop: a.drop || b.drop,
    asnDrop: a.asnDrop || b.asnDrop,
    reportedAbuse: a.reportedAbuse || b.reportedAbuse,
    dnsblZones: merge(a.dnsblZones, b.dnsblZones),
    providerScore: a.providerScore === null ? b.providerScore : b.providerScore === null ? a.providerScore : Math.max(a.providerScore, b.providerScore),
  };
}

describe('riskscore scoring', () => {
  it('is monotone: more evidence never lowers risk, threat or anonymous confidence, nor clears a flag', () => {
    fc.assert(
      fc.property(evidence, evidence, fc.integer({ min: 1, max: 10 }), (a, b, threshold) => {
        const less = intelligenceOf(a, threshold);
        const more = intelligenceOf(union(a, b), threshold);
        atLeast(more.risk.score, less.risk.score);
        atLeast(more.threat.score, less.threat.score);
        atLeast(more.anonymous_confidence, less.anonymous_confidence);
        for (const [flag, on] of Object.entries(less.flags)) {
          const kept = more.flags[flag as keyof typeof more.flags];
          if (on && kept !== true) expect(kept, flag).toBe(true);
        }
        for (const tag of less.tags.filter((t) => !t.startsWith('ipsum:'))) contains(more.tags, tag);
      }),
      { numRuns: 2000 },
    );
  });

  it('scores stay within 0-100 and the risk score is never below the threat score', () => {
    fc.assert(
      fc.property(evidence, (e) => {
        const i = intelligenceOf(e);
        for (const s of [i.risk.score, i.threat.score, i.anonymous_confidence]) expect(s >= 0 && s <= 100 && Number.isInteger(s)).toBe(true);
        expect(i.risk.score).toBeGreaterThanOrEqual(i.threat.score);
        expect(i.risk.level).toBe(levelOf(i.risk.score));
      }),
    );
  });

  it('one more IPsum list never lowers the threat score', () => {
    for (let n = 0; n < 12; n++) {
      expect(intelligenceOf({ ...NO_EVIDENCE, ipsumLists: n + 1 }).threat.score).toBeGreaterThanOrEqual(
        intelligenceOf({ ...NO_EVIDENCE, ipsumLists: n }).threat.score,
      );
    }
  });

  it('bands and verdicts as documented', () => {
    expect([0, 24, 25, 49, 50, 74, 75, 100].map(levelOf)).toEqual(['low', 'low', 'medium', 'medium', 'high', 'high', 'critical', 'critical']);
    expect(intelligenceOf(NO_EVIDENCE).verdict).toBe('clean');
    expect(intelligenceOf({ ...NO_EVIDENCE, cloud: ['amazon'] }).verdict).toBe('hosting');
    expect(intelligenceOf({ ...NO_EVIDENCE, relay: true }).verdict).toBe('relay');
    expect(intelligenceOf({ ...NO_EVIDENCE, ipsumLists: 2 }).verdict).toBe('suspicious');
    expect(intelligenceOf({ ...NO_EVIDENCE, ipsumLists: 3 }).verdict).toBe('malicious');
    expect(intelligenceOf({ ...NO_EVIDENCE, ipsumLists: 2 }, 2).verdict).toBe('malicious');
    expect(intelligenceOf({ ...NO_EVIDENCE, tor: true, ipsumLists: 1 }).verdict).toBe('anonymizer');
    expect(intelligenceOf({ ...NO_EVIDENCE, drop: true }).verdict).toBe('malicious');
    const tor = intelligenceOf({ ...NO_EVIDENCE, tor: true });
    expect(tor).toMatchObject({
      risk: { score: 70, level: 'high' },
      threat: { score: 10, level: 'low' },
      anonymous_confidence: 95,
      tags: ['tor_exit'],
      categories: ['tor'],
    });
  });

  it('a clean verdict never comes with a high or critical risk, and names any provider score behind its risk', () => {
    fc.assert(
      // Random evidence is almost never clean: each case also runs with the provider's score alone.
      fc.property(evidence, fc.integer({ min: 1, max: 10 }), fc.integer({ min: 0, max: 100 }), (e, threshold, score) => {
        for (const i of [intelligenceOf(e, threshold), intelligenceOf({ ...NO_EVIDENCE, providerScore: score }, threshold)]) check(i);
      }),
      { numRuns: 2000 },
    );
    function check(i: ReturnType<typeof intelligenceOf>): void {
      if (i.verdict !== 'clean') return;
      contains(['low', 'medium'], i.risk.level);
      if (i.risk.score > 0) contains(i.description, `provider's own risk score is ${i.risk.score}/100`);
      else if (i.description !== 'Clean: on none of the lists checked.') expect(i.description).toBe('Clean: on none of the lists checked.');
    }
  });

  it('a provider score in the high band makes the verdict suspicious, with the score in the description', () => {
    expect(intelligenceOf({ ...NO_EVIDENCE, providerScore: 90 })).toMatchObject({
      verdict: 'suspicious',
      description: "Suspicious: the provider's own risk score is 90/100.",
      risk: { score: 90, level: 'critical' },
    });
    expect(intelligenceOf({ ...NO_EVIDENCE, providerScore: 50 }).verdict).toBe('suspicious');
    expect(intelligenceOf({ ...NO_EVIDENCE, providerScore: 49 }).verdict).toBe('clean');
    expect(intelligenceOf({ ...NO_EVIDENCE, hostingAsn: true, providerScore: 75 }).verdict).toBe('suspicious');
    expect(intelligenceOf({ ...NO_EVIDENCE, ipsumLists: 1, providerScore: 80 }).description).toBe(
      "Suspicious: seen on 1 public blocklist (IPsum), below the malicious threshold; the provider's own risk score is 80/100.",
    );
    // Anonymizer and malicious verdicts come first, as before.
    expect(intelligenceOf({ ...NO_EVIDENCE, tor: true, providerScore: 100 }).verdict).toBe('anonymizer');
    expect(intelligenceOf({ ...NO_EVIDENCE, reportedAbuse: true, providerScore: 100 }).verdict).toBe('malicious');
    // No provider score (the local provider): descriptions as before.
    expect(intelligenceOf({ ...NO_EVIDENCE, ipsumLists: 2 }).description).toBe(
      'Suspicious: seen on 2 public blocklists (IPsum), below the malicious threshold.',
    );
  });
});
