/** `lib/board`: the status board and session timeline pages (server-rendered hono/jsx). */
export { boardRoutes } from './routes.js';
