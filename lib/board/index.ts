/**
 * `lib/board`: the status board and session timeline pages (server-rendered hono/jsx), as views of what
 * `lib/service` answers. Their routes and sign-in are lib/http's (`lib/http/routes/pages/`), so that
 * no import runs back from here to lib/http.
 */
export * from './pages.js';
