import { queryValue, type ProductRoutes } from '../route.js';

/** SPEC: GET ?ip= and GET /lookup/{ip}, each with an optional `provider` query parameter. */
export const webhookIpRoutes: ProductRoutes = {
  product: 'webhookip',
  routes: [
    {
      method: 'GET',
      path: 'lookup',
      inputError: 'invalid_ip',
      run: (lookup, { query }) => lookup.detailed.webhookip(queryValue(query, 'ip') ?? '', { provider: queryValue(query, 'provider') }),
    },
    {
      method: 'GET',
      path: 'lookup/:ip',
      inputError: 'invalid_ip',
      run: (lookup, { query, pathValue }) => lookup.detailed.webhookip(pathValue ?? '', { provider: queryValue(query, 'provider') }),
    },
  ],
};
