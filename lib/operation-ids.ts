// OpenAPI operation ids, from an operation's method and path (unique as they are): client
// generators name their functions by them and documentation links to them. Both documents use it:
// the API's (api/openapi.ts) and the collector's (collector/openapi.ts).

/** `get /telemetry/metrics/{streamId}` → `getTelemetryMetricsByStreamId`. */
export function operationId(method: string, path: string): string {
  const words = path
    .split('/')
    .filter((part) => part !== '')
    .map((part) => {
      const param = /^\{(.+)\}$/.exec(part);
      const name = (param ? param[1]! : part).replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase());
      return `${param ? 'By' : ''}${name.charAt(0).toUpperCase()}${name.slice(1)}`;
    });
  return `${method.toLowerCase()}${words.join('')}`;
}

/** `paths` with each operation's id set (first among its fields), for a document written as a literal. */
export function withOperationIds<T extends Record<string, Record<string, object>>>(paths: T): T {
  return Object.fromEntries(
    Object.entries(paths).map(([path, ops]) => [path, Object.fromEntries(Object.entries(ops).map(([method, op]) => [method, { operationId: operationId(method, path), ...op }]))]),
  ) as T;
}
