/**
 * `Json`, the plain-JSON object type of the OpenAPI document (./openapi.ts re-exports it): below
 * ./auth.ts (whose `AppServices.document` answers one) and ./openapi.ts, which imports auth's `AppEnv`.
 */

/** A JSON Schema or OpenAPI object, as plain JSON. */
export type Json = { [key: string]: unknown };
