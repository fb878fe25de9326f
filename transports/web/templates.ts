/**
 * The bodies of the browser app's pages, as Eta templates (auto-escaped). Each one receives plain
 * view data built by `pages.ts`; `<%~ %>` only ever outputs HTML built from escaped parts.
 * @module
 */
import { eta } from './html.ts';

const HOME = `<p class="meta">This server's console: your documents, research jobs, reviews waiting for you, your library and the recent requests of your agents' tokens.</p>
<h2>Reviews waiting for you</h2>
<% if (!it.reviews.length) { %><p>No review is waiting.</p><% } else { %><ul><% it.reviews.forEach(function (r) { %><li><a href="/reviews/<%= r.reviewRef %>"><%= r.title %></a> <span class="meta">(<%= r.state %>, <%= r.summary %>)</span></li><% }) %></ul><% } %>
<h2>Documents</h2>
<% if (!it.documents.length) { %><p>No documents yet. Agents create them with <code>POST /api/v1/documents</code>.</p><% } else { %><div class="table stack"><table><thead><tr><th scope="col">Title</th><th scope="col">Version</th><th scope="col">Updated</th></tr></thead><tbody>
<% it.documents.forEach(function (d) { %><tr><td data-label="Title"><a href="/documents/<%= d.documentRef %>"><%= d.title %></a></td><td data-label="Version"><%= d.version %></td><td data-label="Updated"><time datetime="<%= d.updatedAt %>"><%= it.readable(d.updatedAt) %></time></td></tr><% }) %></tbody></table></div><% } %>
<h2>Research jobs</h2>
<% if (it.live) { %><div data-live="/events/jobs"><p id="live-status" role="status" class="meta"></p></div><% } %>
<% if (!it.jobs.length) { %><p>No research jobs.</p><% } else { %><div class="table stack"><table><thead><tr><th scope="col">Question</th><th scope="col">State</th><th scope="col">Phase</th><th scope="col">Progress</th></tr></thead><tbody>
<% it.jobs.forEach(function (j) { %><tr data-job="<%= j.jobId %>"><td data-label="Question"><%= j.question %><% if (j.reviewRef) { %> <a href="/reviews/<%= j.reviewRef %>">review</a><% } %></td><td data-label="State" class="state"><%= j.state %></td><td data-label="Phase" class="phase"><%= j.phaseLabel %></td><td data-label="Progress" class="progress"><progress max="100" value="<%= j.percent %>" aria-label="Progress of <%= j.question %>"></progress> <span class="percent"><%= j.percent %>%</span></td></tr><% }) %></tbody></table></div><% } %>
<h2>Library</h2>
<% if (!it.library.length) { %><p>The library is empty.</p><% } else { %><ul><% it.library.forEach(function (l) { %><li><%= l.title %> <span class="meta">(<%= l.kind %><% if (l.capture) { %>, capture <%= l.capture %><% } %>)</span></li><% }) %></ul><% } %>
<h2>Recent requests</h2>
<% if (!it.requests.length) { %><p>No agent requests yet.</p><% } else { %><ul><% it.requests.forEach(function (r) { %><li><code><%= r.method %> <%= r.path %></code> <%= r.status %><% if (r.errorCode) { %> <%= r.errorCode %><% } %></li><% }) %></ul><% } %>
<p><a href="/requests">All recent requests</a></p>`;

const SETTINGS = `<p>Agents use the API with a bearer token. Create one per agent with the scopes it needs; it is shown once.</p>
<% if (it.newToken) { %><div class="notice" role="status"><p><strong>Copy the token now: it is shown only this once.</strong></p>
<div class="field"><label for="new-token">New token</label><input id="new-token" type="text" readonly value="<%= it.newToken %>" autocomplete="off" spellcheck="false"></div>
<button type="button" data-copy="new-token" class="secondary">Copy</button></div><% } %>
<% if (it.errors.length) { %><div class="error" role="alert"><p>The token was not created:</p><ul><% it.errors.forEach(function (e) { %><li><%= e %></li><% }) %></ul></div><% } %>
<h2>Create a token</h2>
<form method="post" action="/settings/api/tokens">
<input type="hidden" name="csrf" value="<%= it.csrf %>">
<div class="field"><label for="label">Label</label><input id="label" name="label" type="text" required maxlength="80" value="<%= it.form.label %>"></div>
<div class="field"><label for="document">Document</label><input id="document" name="document" type="text" aria-describedby="document-hint" value="<%= it.form.document %>"><p id="document-hint" class="meta">Optional: a documentRef binds the token to that one document.</p></div>
<div class="field"><label for="budget">Request budget</label><input id="budget" name="requestBudget" type="number" min="1" max="10000" required value="<%= it.form.requestBudget %>"></div>
<div class="field"><label for="expires">Expires in days</label><input id="expires" name="expiresInDays" type="number" min="1" max="90" required value="<%= it.form.expiresInDays %>"></div>
<fieldset><legend>Scopes</legend><div class="scopes">
<% it.scopes.forEach(function (s, i) { %><label><input type="checkbox" name="scope" value="<%= s.name %>"<% if (s.checked) { %> checked<% } %>> <%= s.name %></label><% }) %>
</div></fieldset>
<button type="submit">Create token</button>
</form>
<h2>Tokens</h2>
<% if (!it.tokens.length) { %><p>No tokens yet.</p><% } else { %><div class="table stack"><table><thead><tr><th scope="col">Token</th><th scope="col">Label</th><th scope="col">Remaining budget</th><th scope="col">Expires</th><th scope="col">Action</th></tr></thead><tbody>
<% it.tokens.forEach(function (t) { %><tr><td data-label="Token"><code><%= t.displayPrefix %></code><% if (t.documentRef) { %><br><span class="meta">bound to <%= t.documentRef %></span><% } %></td><td data-label="Label"><%= t.label %></td><td data-label="Remaining budget"><%= t.remaining %> of <%= t.budget %></td><td data-label="Expires"><time datetime="<%= t.expiresAt %>"><%= it.readable(t.expiresAt) %></time></td>
<td data-label="Action"><% if (t.revoked) { %>Revoked<% } else if (t.expired) { %>Expired<% } else { %><form method="post" action="/settings/api/tokens/<%= t.credentialRef %>/revoke" class="inline"><input type="hidden" name="csrf" value="<%= it.csrf %>"><button type="submit" class="danger" aria-label="Revoke <%= t.label %>">Revoke</button></form><% } %></td></tr><% }) %></tbody></table></div><% } %>`;

const DOCUMENT = `<p class="meta">Version <span id="doc-version"><%= it.version %></span> · revision <code id="doc-revision"><%= it.revision %></code> · <code><%= it.documentRef %></code></p>
<div data-live="/documents/<%= it.documentRef %>/events?after=<%= it.version %>"><p id="live-status" role="status" class="meta"></p></div>
<% if (it.editor) { %><div id="editor" class="editor" aria-label="Document editor" data-sync="/documents/<%= it.documentRef %>/sync" data-bundle="/assets/editor/editor.js" data-style="/assets/editor/editor.css" data-person="<%= it.editor.person %>" data-nonce="<%= it.editor.nonce %>" hidden></div><% } %>
<article id="doc-body" aria-label="Document"><%~ it.html %></article>
<h2>Markdown</h2>
<p class="meta">What <code>?format=markdown</code> gives an agent. Loss count: <span id="doc-loss"><%= it.lossCount %></span></p>
<% if (it.markdownRefused) { %><p class="meta" role="note" id="doc-markdown-refused">No Markdown of this version: <%= it.markdownRefused %> Remove or change those blocks in the editor to give agents Markdown again.</p><% } %>
<pre id="doc-markdown"><%= it.markdown %></pre>`;

const REVIEW = `<p>State: <strong><%= it.state %></strong> · proposal <code><%= it.proposalRef %></code><% if (it.jobId) { %> · job <code><%= it.jobId %></code> (<%= it.jobState %>)<% } %></p>
<% if (it.conflicts.length) { %><h2>Conflicts</h2><ul><% it.conflicts.forEach(function (c) { %><li><%= c %></li><% }) %></ul><% } %>
<h2>Entities</h2>
<% if (!it.entities.length) { %><p>None.</p><% } else { %><ul><% it.entities.forEach(function (e) { %><li><strong><%= e.name %></strong><% if (e.description) { %>: <%= e.description %><% } %> <span class="meta">(<%= e.concepts %>)</span></li><% }) %></ul><% } %>
<h2>Facts</h2>
<% if (!it.facts.length) { %><p>None.</p><% } else { %><ul><% it.facts.forEach(function (f) { %><li><%= f.subject %> <em><%= f.predicate %></em> (<%= f.stance %>): <%= f.object %></li><% }) %></ul><% } %>
<h2>Evidence</h2>
<% if (!it.evidence.length) { %><p>None.</p><% } else { %><ul><% it.evidence.forEach(function (e) { %><li><%= e.bearing %> for <%= e.fact %>: <% if (e.href) { %><a href="<%= e.href %>" rel="nofollow noopener"><%= e.href %></a><% } else { %><%= e.source %><% } %></li><% }) %></ul><% } %>
<% if (it.inquiries.length) { %><h2>Inquiries</h2><ul><% it.inquiries.forEach(function (q) { %><li><%= q %></li><% }) %></ul><% } %>
<% if (it.report) { %><h2>Report: <%= it.report.title %></h2>
<article aria-label="Report"><%~ it.report.html %></article>
<h3>Citations</h3><% if (!it.report.citations.length) { %><p>The report cites no sources.</p><% } else { %><ol><% it.report.citations.forEach(function (c) { %><li><a href="<%= c.href %>" rel="nofollow noopener"><%= c.text || c.href %></a> <span class="meta"><%= c.href %></span></li><% }) %></ol><% } %><% } %>
<% if (it.canDecide) { %><h2>Your decision</h2>
<form method="post" action="/reviews/<%= it.reviewRef %>/decision" class="inline"><input type="hidden" name="csrf" value="<%= it.csrf %>"><input type="hidden" name="decision" value="accept"><button type="submit">Accept</button></form>
<form method="post" action="/reviews/<%= it.reviewRef %>/decision" class="inline"><input type="hidden" name="csrf" value="<%= it.csrf %>"><input type="hidden" name="decision" value="reject"><button type="submit" class="danger">Reject</button></form><% } %>
<% if (it.state === 'accepted') { %><h2>Publication</h2>
<p>Nothing is public until you confirm the rights, release and promote. Each public page is immutable at its revision.</p>
<ol class="steps">
<li><% if (it.rightsConfirmed) { %><span class="done">Rights confirmed.</span><% } else { %>Confirm that you hold the rights to publish what this space knows.
<form method="post" action="/reviews/<%= it.reviewRef %>/publication" class="inline"><input type="hidden" name="csrf" value="<%= it.csrf %>"><input type="hidden" name="step" value="confirm-rights"><button type="submit">Confirm rights</button></form><% } %></li>
<li><% if (it.released) { %><span class="done">Released (<%= it.releaseCount %>).</span><% } else { %>Release the accepted entities and inquiries<% if (it.report) { %> and the report as an edition<% } %>.
<% if (it.rightsConfirmed) { %><form method="post" action="/reviews/<%= it.reviewRef %>/publication" class="inline"><input type="hidden" name="csrf" value="<%= it.csrf %>"><input type="hidden" name="step" value="release"><button type="submit">Release</button></form><% } %><% } %></li>
<li><% if (it.promoted) { %><span class="done">Promoted: the public pages resolve.</span><% } else { %>Promote the releases to their public locators.
<% if (it.released) { %><form method="post" action="/reviews/<%= it.reviewRef %>/publication" class="inline"><input type="hidden" name="csrf" value="<%= it.csrf %>"><input type="hidden" name="step" value="promote"><button type="submit">Promote</button></form><% } %><% } %></li>
</ol>
<% if (it.publicLinks.length) { %><h3>Public pages</h3><ul><% it.publicLinks.forEach(function (l) { %><li><%= l.kind %>: <a href="<%= l.href %>"><%= l.title %></a></li><% }) %></ul><% } %><% } %>`;

const REQUESTS = `<p>The last requests of each of your tokens, as this server answered them. A client's error carries the request id shown here.</p>
<form method="get" action="/requests" class="filters">
<div class="field"><label for="f-token">Token</label><select id="f-token" name="token"><option value="">All tokens</option><% it.tokens.forEach(function (t) { %><option value="<%= t.credentialRef %>"<% if (t.selected) { %> selected<% } %>><%= t.label %> (<%= t.displayPrefix %>)</option><% }) %></select></div>
<div class="field"><label for="f-status">Status</label><select id="f-status" name="status"><% it.statuses.forEach(function (s) { %><option value="<%= s.value %>"<% if (s.selected) { %> selected<% } %>><%= s.label %></option><% }) %></select></div>
<button type="submit" class="secondary">Filter</button></form>
<% if (!it.requests.length) { %><p>No requests match.</p><% } else { %><div class="table stack"><table><thead><tr><th scope="col">Time</th><th scope="col">Token</th><th scope="col">Request</th><th scope="col">Status</th><th scope="col">Error</th><th scope="col">Duration</th><th scope="col">Request id</th></tr></thead><tbody>
<% it.requests.forEach(function (r) { %><tr><td data-label="Time"><time datetime="<%= r.time %>"><%= it.readable(r.time) %></time></td><td data-label="Token"><%= r.token %></td><td data-label="Request"><code><%= r.method %> <%= r.path %></code></td><td data-label="Status"><%= r.status %></td><td data-label="Error"><%= r.errorCode || '' %></td><td data-label="Duration"><%= r.durationMs %> ms</td><td data-label="Request id"><code><%= r.requestId %></code></td></tr><% }) %></tbody></table></div><% } %>`;

const SIGN_IN = `<p>These pages are for the person who runs this server, signed in.</p>
<p>To sign in, open the one-time sign-in link that <code>kw serve</code> printed when it started (also in its <code>--json</code> line as <code>signInUrl</code>). A link works once, within 15 minutes.</p>
<p>For a new link, run <code>kw sign-in</code> in the folder the server was started in (<code>npm run kw -- sign-in</code> in a clone; <code>--data DIR</code> for another data folder), or ask the operator API with the server's operator key: <code>curl -X POST -H "Authorization: Bearer $KW_OPERATOR_KEY" -H "Content-Type: application/json" -d '{}' <%= it.origin %>/operator/v1/sign-in-links</code></p>
<% if (it.api) { %><p>Agents read the same data through the API with a bearer token: <code><%= it.api %></code></p><% } %>`;

eta.loadTemplate('@home', HOME);
eta.loadTemplate('@settings', SETTINGS);
eta.loadTemplate('@document', DOCUMENT);
eta.loadTemplate('@review', REVIEW);
eta.loadTemplate('@requests', REQUESTS);
eta.loadTemplate('@sign-in', SIGN_IN);
