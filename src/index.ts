/**
 * seclookup: security lookups as in-process engines (`createLookup`), a transport-agnostic
 * HTTP API (`createApi`), and meter stores. Adapters live at `seclookup/node`,
 * `seclookup/express` and `seclookup/fastify`; the SQLite store at `seclookup/sqlite`.
 */
export { createLookup } from './lookup.js';
export type { Lookup, LookupOptions, LookupOutcome } from './lookup.js';
export { LookupError, isLookupError, ERROR_STATUS } from './errors.js';
export type { ErrorCode } from './errors.js';

export { createApi, BUILT_PRODUCTS } from './api/create-api.js';
export { DEFAULT_BODY_LIMIT } from './api/body.js';
export type { Api, ApiOptions, ApiRequest, ApiResponse, RequestBody, RequestLogEvent } from './api/types.js';

export { createMemoryMeter } from './metering/memory.js';
export type { MemoryMeterOptions } from './metering/memory.js';
export { DEFAULT_PLANS } from './metering/plans.js';
export { issueKeys, hashKey } from './metering/keys.js';
export type { IssueKeysOptions, IssuedKeys } from './metering/keys.js';
export type * from './metering/types.js';

export { PRODUCTS, PRODUCT_IDS, SCAMRISK_TYPES, isProductId } from './products/catalog.js';
export type { ProductId, ProductInfo } from './products/catalog.js';
export type { UserAgentResult, UserAgentEngineOptions } from './products/useragent/types.js';
export { USER_AGENT_MAX_LENGTH } from './products/useragent/types.js';
export type { WebhookIpResult, WebhookIpOptions, WebhookProvider, WebhookRangesDataset, WebhookRangeSource } from './products/webhookip/types.js';
