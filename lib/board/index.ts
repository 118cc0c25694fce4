/**
 * `lib/board`: the status board and session timeline pages (server-rendered hono/jsx), as views of what
 * `lib/service` answers. Their routes and sign-in are lib/http's (`lib/http/routes/pages/`), so that
 * no import runs back from here to lib/http.
 */
export * from './admin.js';
export * from './assets.js';
export * from './components.js';
export * from './layout.js';
export * from './overview.js';
export * from './pages.js';
export * from './sign-in.js';
export * from './signed-in.js';
