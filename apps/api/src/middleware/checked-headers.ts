/**
 * Header schemas a route's own middleware checks before its validators run (the Idempotency-Key
 * middleware parses its header with the same schema and answers 400 itself): defineRoute puts
 * them in the OpenAPI document and does not validate them again. zod-openapi's header validator
 * reads every header of the request into an object first, which costs a request more than the
 * check itself, with or without the header.
 */
const checkedByMiddleware = new WeakSet<object>();

/** Marks `schema` as checked by the middleware of every route that declares it. */
export function headersCheckedByMiddleware<T extends object>(schema: T): T {
  checkedByMiddleware.add(schema);
  return schema;
}

export function isCheckedByMiddleware(schema: unknown): boolean {
  return typeof schema === "object" && schema !== null && checkedByMiddleware.has(schema);
}
