import { defineService } from '../service.js';
import { createCaptchaService } from './service.js';
import { createWidgetAssets } from './widget.js';
import { CAPTCHA_DOC } from './doc.js';
import { createSiteKey } from './site-keys.js';
import { signingKeysProblem } from './key-ring.js';

/** captcha: puzzles and managed checks for pages, single-use proofs for their servers, and the widget. */
export default defineService({
  id: 'captcha',
  // SPEC: the captcha routes; OPTIONS answers CORS preflights of the browser routes.
  routes: [
    { method: 'GET', path: 'challenge', handler: 'challenge' },
    { method: 'OPTIONS', path: 'challenge', handler: 'preflight' },
    { method: 'POST', path: 'verify', handler: 'verify' },
    { method: 'OPTIONS', path: 'verify', handler: 'preflight' },
    { method: 'POST', path: 'managed', handler: 'managed' },
    { method: 'OPTIONS', path: 'managed', handler: 'preflight' },
    { method: 'POST', path: 'siteverify', handler: 'siteverify' },
    { method: 'GET', path: 'status', handler: 'status' },
    { method: 'GET', path: 'usage', handler: 'usage' },
  ],
  internalErrorCode: 'server_error',
  doc: CAPTCHA_DOC,
  create: createCaptchaService,
  assets: createWidgetAssets(),
  startWarnings: async (meter, secret) => {
    const problem = await signingKeysProblem(meter, secret);
    return problem ? [problem] : [];
  },
  // A site key with no domains yet: its browser routes answer domain_not_configured until `sitekeys update`.
  starterKeys: async (meter) => {
    const created = await createSiteKey(meter, {});
    return {
      product: 'captcha',
      plan: created.plan,
      subscriptionId: created.subscriptionId,
      keys: [],
      secretKey: created.secretKey,
      publicKey: created.siteKey,
    };
  },
});
