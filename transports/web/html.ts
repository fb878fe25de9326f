/**
 * The page frame of the browser app: Eta templates with auto-escaping, the shared layout (header with
 * the navigation and the "Sign out" button) and the headers every HTML answer carries.
 * @remarks Every `<%= %>` is HTML-escaped; the only raw outputs (`<%~ %>`) are HTML this module or
 * `src/api/rich-html.ts` built from escaped parts. Pages load one stylesheet and one script from `/assets/`,
 * so the Content-Security-Policy allows no inline script or style at all.
 * @module
 */
import { Eta } from 'eta/core';
import type { PlainResponse } from '../../src/api/types.ts';
import { ASSET_VERSION } from './assets.ts';


/** The policy of every page: own scripts, styles and connections only; never framed. */
export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/** Eta with auto-escaping, templates registered by name. */
export const eta = new Eta({ autoEscape: true, autoTrim: false, useWith: false });

const LAYOUT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title><%= it.title %> · Knowledge workspace</title>
<link rel="stylesheet" href="/assets/app.css?v=<%= it.assetVersion %>">
<script src="/assets/app.js?v=<%= it.assetVersion %>" defer></script>
</head><body>
<header class="top"><nav aria-label="Main"><a href="/">Console</a> <a href="/settings/api">Agent access</a> <a href="/requests">Requests</a></nav>
<% if (it.csrf) { %><form method="post" action="/sign-out" class="inline"><input type="hidden" name="csrf" value="<%= it.csrf %>"><span class="who">Signed in as <%= it.account %></span> <button type="submit">Sign out</button></form><% } %></header>
<main id="main"><h1><%= it.title %></h1>
<%~ it.body %>
</main></body></html>
`;

const SIGNED_OUT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title><%= it.title %> · Knowledge workspace</title>
<link rel="stylesheet" href="/assets/app.css?v=<%= it.assetVersion %>">
</head><body><main id="main"><h1><%= it.title %></h1>
<%~ it.body %>
</main></body></html>
`;

eta.loadTemplate('@layout', LAYOUT);
eta.loadTemplate('@signed-out', SIGNED_OUT);

/** Who the page is for: the account and the session's CSRF token (null on signed-out pages). */
export interface PageViewer {
  account: string;
  csrf: string;
}

/** Headers of every HTML page; `private` adds `Cache-Control: no-store` (signed-in and error pages). */
export function pageHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': PAGE_CSP,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'same-origin',
    'cache-control': 'no-store',
    ...extra,
  };
}

/** A signed-in page: the layout around `body` (already-escaped HTML). */
export function page(status: number, title: string, body: string, viewer: PageViewer, extra: Record<string, string> = {}): PlainResponse {
  const html = eta.render('@layout', { title, body, csrf: viewer.csrf, account: viewer.account, assetVersion: ASSET_VERSION });
  return { status, headers: pageHeaders(extra), body: html };
}

/** A page without a session (sign-in required, expired link, not found). */
export function plainPage(status: number, title: string, body: string, extra: Record<string, string> = {}): PlainResponse {
  return { status, headers: pageHeaders(extra), body: eta.render('@signed-out', { title, body, assetVersion: ASSET_VERSION }) };
}

/** The body of a template registered with {@link eta}. */
export function render(name: string, data: Record<string, unknown>): string {
  return eta.render(name, data);
}

/** A 303 See Other to `location` (after a form post), with extra headers such as Set-Cookie. */
export function seeOther(location: string, extra: Record<string, string> = {}): PlainResponse {
  return { status: 303, headers: { location, 'cache-control': 'no-store', 'content-length': '0', ...extra }, body: '' };
}
