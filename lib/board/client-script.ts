/**
 * The board's one script of its own (served as `/assets/board.js`, ./assets.ts): it keeps the live
 * indicator (`#live-status`, `aria-live="polite"`) saying whether the page is up to date, and, in poll
 * mode, sends the last ETag of the overview region as `If-None-Match` so an unchanged board costs a 304;
 * and when the region is swapped it puts the keyboard focus back on the same link (a keyboard user's place
 * survives an update).
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
  function region(evt) {
    var elt = evt && evt.detail && evt.detail.elt;
    return elt && elt.id === 'overview' ? elt : null;
  }
  // Server-sent events (htmx-ext-sse): open is live; an error means the stream dropped and is retried.
  document.addEventListener('htmx:sseOpen', function () { indicator('live'); });
  document.addEventListener('htmx:sseError', function () { indicator('disconnected'); });
  document.addEventListener('htmx:sseClose', function () { indicator('disconnected'); });
  // The conditional poll: send the last ETag, keep the new one, and say whether the server answered.
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
    if (xhr && (xhr.status === 200 || xhr.status === 304)) {
      var etag = xhr.getResponseHeader('ETag');
      if (etag) elt.setAttribute('data-etag', etag);
      indicator('live');
    } else {
      indicator('disconnected');
    }
  });
  document.addEventListener('htmx:sendError', function (evt) { if (region(evt)) indicator('disconnected'); });
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
  document.addEventListener('htmx:sseBeforeMessage', remember);
  document.addEventListener('htmx:sseMessage', restore);
  document.addEventListener('htmx:beforeSwap', remember);
  document.addEventListener('htmx:afterSwap', restore);
  document.addEventListener('DOMContentLoaded', function () {
    var el = document.getElementById('live-status');
    // A poll page is live as soon as it has loaded; an SSE page once its stream opens.
    if (el && el.getAttribute('data-live') === 'poll') indicator('live');
  });
})();
`;
