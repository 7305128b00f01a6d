import { isProductId, type ProductId } from '../products/catalog.js';
import type { AnyProductModule } from '../products/module.js';
import type { ExtraRoute, LookupRoute } from '../products/route.js';
import type { ServiceAssets, ServiceModule } from '../products/service.js';
import { OPENAPI_PATH } from '../openapi/document.js';

/** A product's lookup route or one of its extra routes. */
export type AnyRoute = LookupRoute<unknown[]> | ExtraRoute;

export const HEALTH_PATH = '/healthz';

export type RouteMatch =
  | { kind: 'health'; pattern: string }
  | { kind: 'openapi'; pattern: string }
  | { kind: 'status'; product: ProductId; pattern: string }
  | { kind: 'lookup'; product: ProductId; route: AnyRoute; pattern: string; rawPathValue?: string }
  | { kind: 'service'; product: ProductId; handler: string; pattern: string }
  | { kind: 'batch'; product: ProductId; pattern: string }
  | { kind: 'asset'; assets: ServiceAssets; name: string; pattern: string }
  | { kind: 'not_found'; product: ProductId | null }
  | { kind: 'method_not_allowed'; product: ProductId | null; allow: string[] };

/**
 * The route table: `/healthz`, `/v1/openapi.json`, the status route of every product, and the lookup routes of
 * the products that are built. Paths are matched on their raw (still encoded) segments, so an
 * encoded `/` inside a path value never splits it. HEAD is answered wherever GET is (the API
 * sends the GET answer's status and headers without its body); `Allow` lists GET alone, as
 * HEAD goes with it.
 */
export function createRouter(
  products: readonly Pick<AnyProductModule, 'id' | 'routes' | 'extraRoutes' | 'batch'>[],
  services: readonly Pick<ServiceModule, 'id' | 'routes' | 'assets'>[] = [],
) {
  const serviceRoutes = new Map(services.map((s) => [s.id, s.routes]));
  const assetMounts = services.flatMap((s) => (s.assets ? [s.assets] : []));
  // `POST /v1/<product>/batch` on the products that declare one.
  const batchProducts = new Set(products.filter((p) => p.batch).map((p) => p.id));
  // Each route's pattern, split once: `lookup/:ua` -> base `lookup`, takes a path value.
  const lookupRoutes = new Map(
    products.map((p) => [
      p.id,
      [...p.routes, ...(p.extraRoutes ?? [])].map((route: AnyRoute) => ({ route, base: route.path.split('/:')[0], takesValue: route.path.includes('/:') })),
    ]),
  );

  // Answers for the fixed paths (status, query-form lookups, health), by path then method.
  // Only real routes are remembered, so the table stays as small as the route list; the
  // matches it hands out are shared and must not be modified.
  const fixedPaths = new Map<string, Map<string, RouteMatch>>();

  return function match(method: string, path: string): RouteMatch {
    const known = fixedPaths.get(path)?.get(method);
    if (known) return known;
    const found = matchUncached(method, path);
    if (
      found.kind === 'health' ||
      found.kind === 'openapi' ||
      found.kind === 'status' ||
      found.kind === 'service' ||
      found.kind === 'batch' ||
      (found.kind === 'lookup' && found.rawPathValue === undefined)
    ) {
      let byMethod = fixedPaths.get(path);
      if (!byMethod) fixedPaths.set(path, (byMethod = new Map()));
      byMethod.set(method, found);
    }
    return found;
  };

  function matchUncached(requestMethod: string, path: string): RouteMatch {
    const method = requestMethod === 'HEAD' ? 'GET' : requestMethod;
    if (path === HEALTH_PATH) {
      return method === 'GET' || method === 'HEAD'
        ? { kind: 'health', pattern: HEALTH_PATH }
        : { kind: 'method_not_allowed', product: null, allow: ['GET', 'HEAD'] };
    }
    if (path === OPENAPI_PATH) {
      return method === 'GET' ? { kind: 'openapi', pattern: OPENAPI_PATH } : { kind: 'method_not_allowed', product: null, allow: ['GET', 'HEAD'] };
    }
    for (const assets of assetMounts) {
      if (!path.startsWith(assets.mount)) continue;
      const name = path.slice(assets.mount.length);
      if (method !== 'GET') return { kind: 'method_not_allowed', product: null, allow: ['GET', 'HEAD'] };
      return { kind: 'asset', assets, name, pattern: `${assets.mount}:file` };
    }
    const segments = path.split('/');
    // ['', 'v1', product, ...rest]
    if (segments.length < 4 || segments[0] !== '' || segments[1] !== 'v1' || !isProductId(segments[2])) {
      return { kind: 'not_found', product: null };
    }
    const product = segments[2];
    const rest = segments.slice(3);
    const own = serviceRoutes.get(product);
    if (own) {
      const at = rest.join('/');
      const matching = own.filter((route) => route.path === at);
      if (matching.length === 0) return { kind: 'not_found', product };
      const hit = matching.find((route) => route.method === method);
      if (!hit) return { kind: 'method_not_allowed', product, allow: matching.map((route) => route.method) };
      return { kind: 'service', product, handler: hit.handler, pattern: `/v1/${product}/${hit.path}` };
    }
    if (rest.length === 1 && rest[0] === 'status') {
      return method === 'GET' ? { kind: 'status', product, pattern: `/v1/${product}/status` } : { kind: 'method_not_allowed', product, allow: ['GET'] };
    }
    if (rest.length === 1 && rest[0] === 'batch' && batchProducts.has(product)) {
      return method === 'POST' ? { kind: 'batch', product, pattern: `/v1/${product}/batch` } : { kind: 'method_not_allowed', product, allow: ['POST'] };
    }
    const candidates: { route: AnyRoute; rawPathValue?: string }[] = [];
    for (const { route, base, takesValue } of lookupRoutes.get(product) ?? []) {
      if (rest[0] !== base) continue;
      if (!takesValue && rest.length === 1) candidates.push({ route });
      if (takesValue && rest.length >= 2) candidates.push({ route, rawPathValue: rest.slice(1).join('/') });
    }
    if (candidates.length === 0) return { kind: 'not_found', product };
    const hit = candidates.find((c) => c.route.method === method);
    if (!hit) return { kind: 'method_not_allowed', product, allow: [...new Set(candidates.map((c) => c.route.method))] };
    return { kind: 'lookup', product, route: hit.route, pattern: `/v1/${product}/${hit.route.path}`, rawPathValue: hit.rawPathValue };
  }
}
