/**
 * The person's side, as an installable piece: `createBrowserApp(engine, options).mount(apiHandler)`
 * answers the browser app's pages (sign-in, agent tokens, documents, reviews, the console, the request
 * inspector) and hands every other request to the API handler. See docs/browser-app.md.
 * @module
 */
export { createBrowserApp, SESSION_COOKIE, type BrowserApp, type BrowserAppOptions } from './app.ts';
export { RequestInspector, type InspectedRequest, type InspectorLimits, type AnsweredRequest } from './inspector.ts';
