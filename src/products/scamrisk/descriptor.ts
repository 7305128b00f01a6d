/** scamrisk: what the catalog and the HTTP client know of it (src/products/descriptor.ts). */
import { defineDescriptor } from '../descriptor.js';
import type { ScamriskRequest } from './types.js';

/** The identifier types scamrisk lists on its status route. */
export const SCAMRISK_TYPES = ['email', 'phone', 'ip', 'username', 'address', 'crypto', 'domain', 'url'] as const;

export default defineDescriptor({
  id: 'scamrisk',
  load: () => import('./index.js'),
  commands: {
    reports: {
      usage: 'reports add|import|dispute|list',
      summary: "scamrisk's report database (in the --db file)",
      load: async () => (await import('./cli.js')).runReports,
    },
  },
  secretPrefix: 'sa_sec_',
  // The spec leaves the scamrisk public prefix open; ours is sa_pub_.
  publicPrefix: 'sa_pub_',
  hasFetchedAt: false,
  hasDatabaseRecords: false,
  // A source the assessment needs (the report database) failed.
  errorCodes: { assessment_failed: 500 },
  client: {
    // `{ type, value, region? }` or `{ <type>: value }`, sent as it is.
    request: (request: ScamriskRequest) => ({ method: 'POST', path: 'assess', body: request }),
  },
});
