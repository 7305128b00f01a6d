import { describe, expect, it } from 'vitest';
import { batchItemError, errorBody, formatFetchedAt, newRequestId, successBody } from '../../src/api/envelope.js';
import { ERROR_STATUS } from '../../src/errors.js';

describe('envelope', () => {
  it('makes unique req_ ids', () => {
    const ids = new Set(Array.from({ length: 1000 }, newRequestId));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{32}$/);
  });

  it('formats fetched_at as YYYY-MM-DD HH:MM:SS.mmm UTC', () => {
    expect(formatFetchedAt(new Date(Date.UTC(2026, 10, 22, 6, 5, 4, 32)))).toBe('2026-11-22 06:05:04.032');
  });

  it('puts success, request_id, cached and fetched_at before the resource fields', () => {
    const body = JSON.parse(successBody({ ip: '1.2.3.4' }, { requestId: 'req_1', cached: true, fetchedAt: new Date(Date.UTC(2026, 0, 1)) }));
    expect(Object.keys(body)).toEqual(['success', 'request_id', 'cached', 'fetched_at', 'ip']);
    expect(body).toEqual({ success: true, request_id: 'req_1', cached: true, fetched_at: '2026-01-01 00:00:00.000', ip: '1.2.3.4' });
    expect(JSON.parse(successBody({}, { requestId: 'req_1' }))).toEqual({ success: true, request_id: 'req_1' });
  });

  it('splices in a result the engine already serialized, exactly as if serialized here', () => {
    const resource = { user_agent: 'curl/8.0 "quoted" \\ é', browser: {}, is_bot: true };
    const spliced = successBody(resource, { requestId: 'req_3', cached: false }, JSON.stringify(resource));
    expect(spliced).toBe(successBody(resource, { requestId: 'req_3', cached: false }));
    expect(JSON.parse(spliced)).toEqual({ success: true, request_id: 'req_3', cached: false, ...resource });
  });

  it('builds the error envelope', () => {
    expect(JSON.parse(errorBody('invalid_ip', 'bad', 'req_2'))).toEqual({ success: false, error: 'bad', error_code: 'invalid_ip', request_id: 'req_2' });
  });

  it('writes the error envelope byte for byte as JSON.stringify of the spread object, with and without fields', () => {
    const messages = ['bad', 'a "quoted" \\ path\nand a new line', 'ünïcödé 😀 \u0001', ''];
    const fieldSets = [
      undefined,
      {},
      { 'error-codes': ['invalid-input-response'] },
      { interactive_required: true, risk_score: 45, risk_level: 'medium', note: undefined, nested: { a: [1, null] } },
    ];
    for (const message of messages) {
      for (const fields of fieldSets) {
        const expected = { success: false, error: message, error_code: 'invalid_token', ...fields };
        expect(errorBody('invalid_token', message, 'req_3f', fields)).toBe(JSON.stringify({ ...expected, request_id: 'req_3f' }));
        expect(batchItemError('invalid_token', message, fields)).toBe(JSON.stringify(expected));
      }
    }
  });

  it('keeps the text of frozen fields only: a fields object that can change is written as it is now', () => {
    const frozen = Object.freeze({ 'error-codes': Object.freeze(['timeout-or-duplicate']) });
    expect(errorBody('token_already_used', 'used', 'req_1', frozen)).toBe(
      JSON.stringify({ success: false, error: 'used', error_code: 'token_already_used', 'error-codes': ['timeout-or-duplicate'], request_id: 'req_1' }),
    );
    expect(errorBody('token_already_used', 'used', 'req_2', frozen)).toContain('"error-codes":["timeout-or-duplicate"],"request_id":"req_2"');
    // Frozen on the outside only: the array inside can change, so its text is not kept.
    const shallow = Object.freeze({ 'error-codes': ['a'] });
    expect(errorBody('invalid_token', 'x', 'req_3', shallow)).toContain('"error-codes":["a"]');
    shallow['error-codes'].push('b');
    expect(errorBody('invalid_token', 'x', 'req_4', shallow)).toContain('"error-codes":["a","b"]');
    const open: Record<string, unknown> = { risk_score: 1 };
    expect(errorBody('risk_too_high', 'x', 'req_5', open)).toContain('"risk_score":1,');
    open.risk_score = 2;
    expect(errorBody('risk_too_high', 'x', 'req_6', open)).toContain('"risk_score":2,');
  });

  it('keeps the spec statuses for the spec codes', () => {
    expect(ERROR_STATUS).toMatchObject({
      missing_credentials: 401,
      invalid_api_key: 401,
      wrong_key_type: 401,
      ip_not_allowed: 403,
      rate_limit_exceeded: 429,
      quota_exceeded: 429,
      internal_error: 500,
      invalid_user_agent: 400,
      invalid_ip: 400,
      ip_not_routable: 422,
      lookup_failed: 502,
      ip_not_found: 404,
      upstream_unconfigured: 503,
    });
  });
});
