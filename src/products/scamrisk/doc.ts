import { bool, int, isoTime, type JsonSchema, list, num, obj, oneOf, str } from '../../openapi/schema.js';
import type { ProductDoc } from '../../openapi/types.js';
import { REPORT_CATEGORIES } from './reports.js';
import { IDENTIFIER_TYPES, SEVERITIES, SIGNAL_SEVERITY, type Recommendation, type RiskLevel } from './types.js';

const RISK_LEVELS = ['minimal', 'low', 'medium', 'high', 'critical'] as const satisfies readonly RiskLevel[];
const RECOMMENDATIONS = ['allow', 'allow_with_monitoring', 'elevated_monitoring', 'manual_review'] as const satisfies readonly Recommendation[];
// Both lists hold every value of their type: a new one fails to compile here until documented.
const complete: [Exclude<RiskLevel, (typeof RISK_LEVELS)[number]> | Exclude<Recommendation, (typeof RECOMMENDATIONS)[number]>] extends [never] ? true : never =
  true;
void complete;

const TYPE = oneOf(IDENTIFIER_TYPES, `The identifier type: ${IDENTIFIER_TYPES.join(', ')}.`);
const VALUE =
  'The identifier (URL-encoded on GET). A crypto address whose checksum fails (Bitcoin base58check or bech32/bech32m, EIP-55 mixed case, SS58, Tron, Litecoin, Dogecoin, Dash, Zcash, XRP, cashaddr) is 400 invalid_identifier naming the reason; an all-lower or all-upper EVM address has no checksum and is assessed.';
const REGION = 'Ours: region of a phone number given without + (ISO 3166 alpha-2); phone only.';
const REGION_SCHEMA = str(REGION, { pattern: '^[A-Za-z]{2}$' });
const identifier = obj({ type: TYPE, masked: str('Masked form of the input value.') });

/**
 * POST assess: { type, value } or the typed shorthand { "<type>": value }, and region with a
 * phone only; any other member is 400 invalid_request (engine.ts prepare).
 */
const ASSESS_BODY: JsonSchema = {
  description:
    'type and value, or the typed shorthand: an object whose single key is the type name and whose value is the identifier. A phone may add region. Any other member, an empty value, or region with another type is 400 invalid_request.',
  anyOf: [
    {
      ...obj({ type: TYPE, value: str(VALUE, { minLength: 1 }), region: REGION_SCHEMA }, { optional: ['region'], closed: true }),
      dependentSchemas: { region: { properties: { type: { const: 'phone' } } } },
    },
    ...IDENTIFIER_TYPES.map((type) =>
      obj(
        { [type]: str(`The ${type} to assess.`, { minLength: 1 }), ...(type === 'phone' ? { region: REGION_SCHEMA } : {}) },
        { optional: type === 'phone' ? ['region'] : [], closed: true },
      ),
    ),
  ],
};

export const SCAMRISK_DOC: ProductDoc = {
  summary:
    "Risk assessment of an identifier (email, phone, ip, username, address, crypto, domain, url). The result concerns identifier risk only and does not establish a person's identity or conduct. A no-match result is not proof of safety. A repeat of the same identifier within 60 seconds (ours) is the cached assessment: cached true, a fresh request_id.",
  query: {
    type: { description: `The identifier type: ${IDENTIFIER_TYPES.join(', ')}.`, required: true, schema: TYPE },
    value: { description: VALUE, required: true },
    region: { description: REGION, schema: REGION_SCHEMA },
  },
  body: ASSESS_BODY,
  result: obj({
    identifier,
    assessment: obj({
      risk_score: int('0-100.', { minimum: 0, maximum: 100 }),
      risk_level: oneOf(RISK_LEVELS, 'minimal 0-14, low 15-34, medium 35-59, high 60-79, critical 80-100.'),
      confidence: num('Fraction 0 to 1.', { minimum: 0, maximum: 1 }),
      coverage: obj({
        sources_queried: int('Sources asked.'),
        sources_responded: int('Sources that answered.'),
        independent_matches: int('Distinct sources with a non-info signal.'),
      }),
      recommendation: oneOf(
        RECOMMENDATIONS,
        'allow (no notable signals), allow_with_monitoring (mild signals), elevated_monitoring (medium risk), manual_review (high or critical).',
      ),
    }),
    signals: list(
      obj(
        {
          code: oneOf(Object.keys(SIGNAL_SEVERITY), 'The signal.'),
          severity: oneOf(SEVERITIES, 'How strongly it speaks for risk; info carries no points.'),
          confidence: num('0 to 1: how sure the source is.', { minimum: 0, maximum: 1 }),
          last_seen: isoTime('When the evidence was last seen (ISO 8601 with offset): a list snapshot date, a report time, now for a live check.', 'offset'),
          source: str('Ours: the source that produced it (ofac, metamask, reports, emailval, ...).'),
          detail: str('Ours: short evidence (asset: ETH, category: phishing, ...), when there is some.'),
        },
        { optional: ['detail'] },
      ),
      'The signals found.',
    ),
    report_summary: obj({
      total_reports: int(),
      verified_reports: int(),
      disputed_reports: int(),
      categories: list(oneOf(REPORT_CATEGORIES), 'Categories of the reports not disputed, sorted.'),
    }),
    limitations: list(str(), 'Fixed caveats about interpretation.'),
    generated_at: isoTime('ISO 8601 timestamp with offset.', 'offset'),
  }),
  errors: ['invalid_request', 'invalid_identifier', 'assessment_failed'],
  status: { supported_types: list(oneOf(IDENTIFIER_TYPES), 'The identifier types assess takes.') },
  extraRoutes: {
    report: {
      summary: 'File a report against an identifier',
      description:
        'Ours: files an unverified report, which the next assessments of the identifier count (its cached assessment is dropped). Authenticated and billed like an assessment. Unknown body fields are 400 invalid_request.',
      body: {
        ...obj(
          {
            type: TYPE,
            value: str('The identifier.', { minLength: 1 }),
            category: oneOf(REPORT_CATEGORIES, 'What it was used for.'),
            reporter: str(
              "The caller's own name for who reports it (its end user, its desk), 1 to 100 characters, not only spaces, no control or text-direction characters (U+202E). The reporter that counts in the score is the subscription of the key: one subscription counts once, whatever names it gives. Default api.",
              { minLength: 1, maxLength: 100, pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f]*\\S[^\\u0000-\\u001f\\u007f-\\u009f]*$' },
            ),
            note: str('Free text, at most 500 characters.', { maxLength: 500 }),
            region: REGION_SCHEMA,
          },
          { optional: ['reporter', 'note', 'region'], closed: true },
        ),
        // As on assess: a region reads a national phone number, nothing else.
        dependentSchemas: { region: { properties: { type: { const: 'phone' } } } },
      },
      result: obj({
        report: obj({
          id: int('The report id.'),
          identifier,
          category: oneOf(REPORT_CATEGORIES),
          reporter: str('As sent, trimmed.'),
          verified: bool('Always false: reports filed here are unverified.'),
          disputed: bool(),
          reported_at: isoTime('ISO 8601 with offset.', 'offset'),
        }),
      }),
      errors: ['invalid_request', 'invalid_identifier'],
    },
  },
};
