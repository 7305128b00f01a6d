import { bool, ipString, list, obj, str } from '../../openapi/schema.js';
import type { ProductDoc } from '../../openapi/types.js';

export const WEBHOOKIP_DOC: ProductDoc = {
  summary: 'Checks whether a public IP falls in the published address ranges of known webhook-sending providers. Use it beside signature verification.',
  query: {
    ip: { description: 'Public IPv4 or IPv6 address.', required: true },
    provider: {
      description:
        'Restrict matching to a provider id (or alias, such as jira for atlassian), or several separated by commas. An unknown id is 400 invalid_provider.',
    },
  },
  result: obj({
    ip: ipString(),
    matched: bool('The IP is in at least one provider range.'),
    providers: list(obj({ id: str(), name: str() }), 'Providers whose ranges hold the IP; empty when matched is false.'),
  }),
  // A batch takes no `provider` (every provider is matched), so none of its items is invalid_provider.
  batchInput: { description: 'A public IPv4 or IPv6 address, as is, matched against every provider.', notInBatch: ['invalid_provider'] },
  errors: ['invalid_ip', 'ip_not_routable', 'invalid_provider'],
};
