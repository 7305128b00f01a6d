import { describe, expect, it } from 'vitest';
import { PRODUCT_MODULES } from '../../src/products/registry.js';
import { createRouter } from '../../src/api/router.js';
import { PRODUCT_IDS } from '../../src/products/catalog.js';

const match = createRouter(PRODUCT_MODULES);

describe('router', () => {
  it('serves the status route of every one of the fifteen products', () => {
    expect(PRODUCT_IDS).toHaveLength(15);
    for (const product of PRODUCT_IDS) {
      expect(match('GET', `/v1/${product}/status`)).toMatchObject({ kind: 'status', product });
    }
  });

  it('matches the useragent query, path and POST forms to distinct routes', () => {
    expect(match('GET', '/v1/useragent/lookup')).toMatchObject({ kind: 'lookup', pattern: '/v1/useragent/lookup' });
    expect(match('POST', '/v1/useragent/lookup')).toMatchObject({ kind: 'lookup', pattern: '/v1/useragent/lookup' });
    const pathForm = match('GET', '/v1/useragent/lookup/Mozilla%2F5.0%20(X11)');
    expect(pathForm).toMatchObject({ kind: 'lookup', pattern: '/v1/useragent/lookup/:ua', rawPathValue: 'Mozilla%2F5.0%20(X11)' });
  });

  it('keeps unencoded slashes of a path value in the value', () => {
    expect(match('GET', '/v1/useragent/lookup/Mozilla/5.0')).toMatchObject({ rawPathValue: 'Mozilla/5.0' });
  });

  it('answers 405 with the allowed methods for a known path and a wrong method', () => {
    expect(match('DELETE', '/v1/useragent/lookup')).toEqual({ kind: 'method_not_allowed', product: 'useragent', allow: ['GET', 'POST'] });
    expect(match('POST', '/v1/webhookip/lookup/1.2.3.4')).toEqual({ kind: 'method_not_allowed', product: 'webhookip', allow: ['GET'] });
    expect(match('POST', '/v1/tls/status')).toEqual({ kind: 'method_not_allowed', product: 'tls', allow: ['GET'] });
  });

  it('leaves unbuilt lookup routes and unknown paths absent (404), not stubbed', () => {
    expect(match('GET', '/v1/captcha/lookup')).toEqual({ kind: 'not_found', product: 'captcha' });
    expect(match('GET', '/v1/nope/status')).toEqual({ kind: 'not_found', product: null });
    expect(match('GET', '/v2/useragent/status')).toEqual({ kind: 'not_found', product: null });
    expect(match('GET', '/')).toEqual({ kind: 'not_found', product: null });
  });

  it('answers /healthz for GET and HEAD only', () => {
    expect(match('GET', '/healthz')).toMatchObject({ kind: 'health' });
    expect(match('HEAD', '/healthz')).toMatchObject({ kind: 'health' });
    expect(match('POST', '/healthz')).toMatchObject({ kind: 'method_not_allowed', allow: ['GET', 'HEAD'] });
  });

  it("matches a product's extra routes (pwbreach's range/:prefix) beside its lookup routes, and nothing else", () => {
    expect(match('GET', '/v1/pwbreach/range/7C4A8')).toMatchObject({
      kind: 'lookup',
      product: 'pwbreach',
      pattern: '/v1/pwbreach/range/:prefix',
      rawPathValue: '7C4A8',
    });
    expect(match('POST', '/v1/pwbreach/lookup')).toMatchObject({ kind: 'lookup', pattern: '/v1/pwbreach/lookup' });
    expect(match('GET', '/v1/pwbreach/lookup')).toMatchObject({ kind: 'lookup', pattern: '/v1/pwbreach/lookup' });
    // SPEC: no path form for pwbreach.
    expect(match('GET', '/v1/pwbreach/lookup/7C4A8D09CA3762AF61E59520943DC26494F8941B')).toEqual({ kind: 'not_found', product: 'pwbreach' });
    expect(match('GET', '/v1/pwbreach/range')).toEqual({ kind: 'not_found', product: 'pwbreach' });
    expect(match('POST', '/v1/pwbreach/range/7C4A8')).toEqual({ kind: 'method_not_allowed', product: 'pwbreach', allow: ['GET'] });
  });
});
