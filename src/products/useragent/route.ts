import { bodyString, queryValue, type ProductRoutes } from '../route.js';

const FIELDS = ['ua', 'user_agent'];

/** SPEC: GET ?ua= / ?user_agent=, GET /lookup/{ua}, POST JSON { ua | user_agent }. */
export const userAgentRoutes: ProductRoutes = {
  product: 'useragent',
  routes: [
    { method: 'GET', path: 'lookup', inputError: 'invalid_user_agent', run: (lookup, { query }) => lookup.detailed.useragent(queryValue(query, ...FIELDS) ?? '') },
    { method: 'GET', path: 'lookup/:ua', inputError: 'invalid_user_agent', run: (lookup, { pathValue }) => lookup.detailed.useragent(pathValue ?? '') },
    { method: 'POST', path: 'lookup', inputError: 'invalid_user_agent', run: (lookup, { body }) => lookup.detailed.useragent(bodyString(body, ...FIELDS) ?? '') },
  ],
};
