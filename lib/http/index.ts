/** `lib/http`: the Hono app (routes, auth, error mapping). */
export { type AppDeps, createApp } from './app.js';
export { type AppEnv, BOARD_COOKIE, bearerToken } from './auth.js';
export { type ErrorBody, errorBody } from './errors.js';
export { ORIGIN_SECRET_HEADER, requireOriginSecret } from './origin-secret.js';
