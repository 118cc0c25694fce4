/**
 * The board's one script of its own (served as `/assets/board.js`, ./assets.ts): it keeps the live
 * indicator (`#live-status`, `aria-live="polite"`) saying whether the page is up to date, and, in poll
 * mode, sends the last ETag of the overview region as `If-None-Match` so an unchanged board costs a 304;
 * and when the region is swapped it puts the keyboard focus back on the same link (a keyboard user's place
 * survives an update).
 * When the stream drops or a poll fails it asks why: a 401 (or a redirect to /login) from the fragment
 * URL means the browser is signed out (`hansard serve` revokes the previous board link at each start), so
 * it stops reconnecting and says so with a link to sign in again (issue 14 finding 1); any other failure
 * (the server is down, a 5xx) keeps the reconnecting.
 * htmx and its SSE extension do the fetching and swapping; this only listens to their events. Plain ES2017,
 * no eval, no inline handlers (the CSP allows scripts from our origin only).
 */
export const BOARD_SCRIPT = `(function () {
  'use strict';
  var LIVE = 'Live: updates appear as they happen';
  var DOWN = 'Disconnected \\u2014 reconnecting\\u2026';
  function indicator(state) {
    var el = document.getElementById('live-status');
    if (!el || el.getAttribute('data-state') === state) return;
    el.hidden = false;
    el.setAttribute('data-state', state);
    el.textContent = state === 'live' ? LIVE : DOWN;
  }
  var OUT = 'Signed out (the server restarted or the sign-in ended): ';
  var signedOut = false;
  var checking = false;
  function region(evt) {
    var elt = evt && evt.detail && evt.detail.elt;
    return elt && elt.id === 'overview' ? elt : null;
  }
  // Signed out: no more reconnecting or polling, and a plain sentence with the way back.
  function signOut() {
    signedOut = true;
    var main = document.getElementById('overview');
    if (main) main.removeAttribute('sse-connect');
    var el = document.getElementById('live-status');
    if (!el || el.getAttribute('data-state') === 'signedout') return;
    el.hidden = false;
    el.setAttribute('data-state', 'signedout');
    el.textContent = OUT;
    var a = document.createElement('a');
    // Back to this very view after signing in (the server follows only a path of the board).
    a.href = '/login?next=' + encodeURIComponent(location.pathname + location.search);
    a.textContent = 'sign in again';
    el.appendChild(a);
    // A restart of a local server revokes its last board link: the new one is in the server's output.
    el.appendChild(document.createTextNode(' (or open the new board link the server printed)'));
    // Signed out, there is nothing to sign out of.
    var out = document.querySelector('form[action="/logout"]');
    if (out) out.hidden = true;
  }
  function isLogin(url) {
    try { return new URL(url, location.href).pathname === '/login'; } catch (e) { return false; }
  }
  // Why did the stream or the poll fail? Only a refused sign-in stops the retries.
  function diagnose() {
    var main = document.getElementById('overview');
    if (checking || signedOut || !main || typeof fetch !== 'function') return;
    var url = main.getAttribute('hx-get') || (main.getAttribute('sse-connect') || '').replace('/board/events', '/board/fragment');
    if (!url) return;
    checking = true;
    fetch(url, { credentials: 'same-origin', cache: 'no-store' }).then(function (res) {
      checking = false;
      if (res.status === 401 || (res.redirected && isLogin(res.url))) signOut();
    }, function () { checking = false; });
  }
  // Server-sent events (htmx-ext-sse): open is live; an error means the stream dropped and is retried.
  document.addEventListener('htmx:sseOpen', function () { if (!signedOut) indicator('live'); });
  document.addEventListener('htmx:sseError', function (evt) {
    if (signedOut) {
      // A retry the extension had already scheduled: close it at once.
      var src = evt.detail && evt.detail.source;
      if (src && src.close) src.close();
      return;
    }
    indicator('disconnected');
    diagnose();
  });
  document.addEventListener('htmx:sseClose', function () { if (!signedOut) indicator('disconnected'); });
  // The conditional poll: send the last ETag, keep the new one, and say whether the server answered.
  document.addEventListener('htmx:beforeRequest', function (evt) {
    if (signedOut && region(evt)) evt.preventDefault();
  });
  document.addEventListener('htmx:beforeSwap', function (evt) {
    var xhr = evt.detail && evt.detail.xhr;
    if (!region(evt) || !xhr) return;
    if (xhr.status === 401 || isLogin(xhr.responseURL)) {
      evt.detail.shouldSwap = false;
      signOut();
    }
  });
  document.addEventListener('htmx:configRequest', function (evt) {
    var elt = region(evt);
    if (!elt) return;
    var etag = elt.getAttribute('data-etag');
    if (etag) evt.detail.headers['If-None-Match'] = etag;
  });
  document.addEventListener('htmx:afterRequest', function (evt) {
    var elt = region(evt);
    if (!elt) return;
    var xhr = evt.detail.xhr;
    if (signedOut) return;
    if (xhr && (xhr.status === 401 || isLogin(xhr.responseURL))) {
      signOut();
    } else if (xhr && (xhr.status === 200 || xhr.status === 304)) {
      var etag = xhr.getResponseHeader('ETag');
      if (etag) elt.setAttribute('data-etag', etag);
      indicator('live');
    } else {
      indicator('disconnected');
    }
  });
  document.addEventListener('htmx:sendError', function (evt) { if (region(evt) && !signedOut) indicator('disconnected'); });
  // Focus: remember the focused link of the region before a swap, focus its twin after.
  var kept = null;
  function remember() {
    var a = document.activeElement;
    var main = document.getElementById('overview');
    kept = a && main && main.contains(a) && a.getAttribute('href') ? a.getAttribute('href') : null;
  }
  function restore() {
    if (!kept) return;
    var links = document.querySelectorAll('#overview a[href]');
    for (var i = 0; i < links.length; i++) {
      if (links[i].getAttribute('href') === kept) { links[i].focus({ preventScroll: true }); break; }
    }
    kept = null;
  }
  // The session page: rows appended by "Load more" bring their page's own first day heading; keep a day's
  // heading once (headings only repeat at a page's start).
  document.addEventListener('htmx:afterSwap', function () {
    var heads = document.querySelectorAll('#rows-list > li.day');
    var seen = null;
    for (var i = 0; i < heads.length; i++) {
      var day = heads[i].getAttribute('data-day');
      if (day === seen) heads[i].parentNode.removeChild(heads[i]);
      seen = day;
    }
  });
  document.addEventListener('htmx:sseBeforeMessage', remember);
  document.addEventListener('htmx:sseMessage', restore);
  document.addEventListener('htmx:beforeSwap', remember);
  document.addEventListener('htmx:afterSwap', restore);
  document.addEventListener('DOMContentLoaded', function () {
    // The session page's side panel comes first; on a phone its parts start folded (open without script).
    if (window.matchMedia && window.matchMedia('(max-width: 699px)').matches) {
      var parts = document.querySelectorAll('details.side-part');
      for (var i = 0; i < parts.length; i++) parts[i].open = false;
    }
    var el = document.getElementById('live-status');
    // A poll page is live as soon as it has loaded; an SSE page once its stream opens.
    if (el && el.getAttribute('data-live') === 'poll') indicator('live');
  });
})();
`;
