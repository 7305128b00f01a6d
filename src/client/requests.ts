/**
 * Each product's in-process call as an HTTP request, from its descriptor's `client` shape
 * (src/products/<id>/descriptor.ts): the inverse of the product's `routes[].args`, which read the
 * same arguments back on the server.
 *
 * The client reads descriptors only, never the product modules: those import their engines
 * (maxmind, better-sqlite3, ...), which the client must never load. The table is still typed
 * against the registry: every built product must have a client shape that takes exactly
 * `LookupArgs<Id>` (a product added to the registry fails `tsc` here until its descriptor has
 * one), and test/client/requests.test.ts checks every entry against its module: the route it
 * names exists, and the arguments that route reads back from the request prepare to the same
 * query as the caller's arguments in-process.
 *
 * Imports from the registry are types only.
 */
import type { LookupArgs } from '../lookup.js';
import { LookupError } from '../errors.js';
import type { BatchInput, ProductClientCall, ProductClientShape, ProductDescriptor, ProductRequest } from '../products/descriptor.js';
import { PRODUCT_DESCRIPTORS } from '../products/descriptors.js';
import type { BuiltProductId } from '../products/registry.js';
import { ARGUMENT_CHECKS } from './args.js';

export type { ProductRequest } from '../products/descriptor.js';

export type RequestTable = { readonly [Id in BuiltProductId]: (...args: LookupArgs<Id>) => ProductRequest };

type Descriptor = (typeof PRODUCT_DESCRIPTORS)[number];
type ClientOf<Id> = Extract<Descriptor, { id: Id }> extends { client: infer Client } ? Client : undefined;
/** The list as plain data, for reading at run time. */
const DESCRIPTORS: readonly ProductDescriptor[] = PRODUCT_DESCRIPTORS;

/** Compile-time only: each built product's client shape takes its engine's arguments. */
type RequestsTakeEngineArgs = {
  [Id in BuiltProductId]: NonNullable<ClientOf<Id>> extends { request: (...args: LookupArgs<Id>) => ProductRequest } ? true : false;
};
const everyRequestTakesEngineArgs: { [Id in BuiltProductId]: true } = {} as RequestsTakeEngineArgs;
void everyRequestTakesEngineArgs;

/** Every product's id (`client.status(product)` takes them). */
export const PRODUCT_ID_SET: ReadonlySet<string> = new Set(DESCRIPTORS.map(({ id }) => id));

/** In descriptor (registry) order. */
export const REQUESTS = Object.fromEntries(DESCRIPTORS.flatMap(({ id, client }) => (client ? [[id, checked(id, client)]] : []))) as unknown as RequestTable;

/**
 * The client shape's `request`, after the engine's argument checks (args.ts: LookupError
 * `invalid_ip`, ... for arguments of the wrong type), throwing LookupError invalid_request for
 * arguments it `refuse`s.
 */
function checked(id: string, client: ProductClientShape<never[]>): (...args: never[]) => ProductRequest {
  const check = ARGUMENT_CHECKS[id as BuiltProductId] ?? ((args: unknown[]) => args);
  const { refuse } = client;
  return (...given) => {
    const args = check(given) as never[];
    const why = refuse?.(...args);
    if (why !== undefined) throw new LookupError('invalid_request', why);
    return client.request(...args);
  };
}

/** The ids whose descriptor names a batch input. */
type BatchIds = { [Id in Descriptor['id']]: NonNullable<ClientOf<Id>> extends { batchInput: BatchInput } ? Id : never }[Descriptor['id']];

/**
 * The products with `POST /v1/<product>/batch`, and what each input is: their descriptor's
 * `batchInput`, which is their module's `batch.input` (test/client/requests.test.ts checks the
 * two agree). pwbreach takes SHA-1 hashes only: a password never leaves in a batch.
 */
export const BATCH_INPUTS = Object.fromEntries(
  DESCRIPTORS.flatMap((descriptor) => (descriptor.client?.batchInput ? [[descriptor.id, descriptor.client.batchInput]] : [])),
) as Readonly<Record<BatchIds & BuiltProductId, BatchInput>>;

export type BatchProductId = keyof typeof BATCH_INPUTS;

/** A descriptor's client calls as the client's methods: `(response, options?) => Promise<SiteverifyResult>`. */
type CallsOf<Calls> = {
  readonly [Name in keyof Calls]: Calls[Name] extends ProductClientCall<infer Args, infer Result> ? (...args: Args) => Promise<Result> : never;
};

/** `client.<id>.<call>(...)` for every product whose descriptor has `clientCalls` (captcha). */
export type ProductCallGroups = {
  readonly [D in Descriptor as D extends { clientCalls: object } ? D['id'] : never]: D extends { clientCalls: infer Calls } ? CallsOf<Calls> : never;
};

/** Each product's client calls, by product then name, as requests (run time). */
export const CALL_GROUPS: ReadonlyMap<string, Readonly<Record<string, (...args: never[]) => ProductRequest>>> = new Map(
  DESCRIPTORS.flatMap(({ id, client, clientCalls }) =>
    clientCalls && !client ? [[id, Object.fromEntries(Object.entries(clientCalls).map(([name, call]) => [name, call.request]))] as const] : [],
  ),
);
