/**
 * The browser app's only stylesheet and script, served from `/assets/` (public, immutable per
 * version). No client framework: the script copies a new token to the clipboard and follows the
 * page's event stream (`data-live`) to update a document or the console's jobs in place.
 * @module
 */

/** The stylesheet: readable at phone width, visible focus, sufficient contrast. */
export const APP_CSS = `*{box-sizing:border-box}
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1a1a1a;background:#fff}
a{color:#0b57d0}a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible{outline:3px solid #0b57d0;outline-offset:2px}
.top{display:flex;flex-wrap:wrap;gap:.5em 1em;align-items:center;justify-content:space-between;padding:.5em 1em;border-bottom:1px solid #ccc;background:#f6f7f9}
.top nav a{margin-right:1em}.who{color:#444;font-size:.9em;margin-right:.5em}
main{max-width:60em;margin:0 auto;padding:1em}
h1{font-size:1.6em;margin:.3em 0 .6em;overflow-wrap:anywhere}h2{font-size:1.25em;margin-top:1.6em}
table{border-collapse:collapse;width:100%}th,td{border:1px solid #ccc;padding:.3em .5em;text-align:left;vertical-align:top;overflow-wrap:break-word}
main p,main li,main dd{overflow-wrap:anywhere}
.table{overflow-x:auto}
@media (max-width:40em){.stack table,.stack tbody,.stack tr,.stack td{display:block;width:100%}.stack thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
.stack tr{border:1px solid #ccc;margin:0 0 .6em;padding:.2em .4em}.stack td{border:0;padding:.15em 0}.stack td[data-label]::before{content:attr(data-label) ": ";font-weight:600}}
code{word-break:normal;overflow-wrap:anywhere}
code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.92em}code{background:#f2f2f2;padding:0 .2em;overflow-wrap:anywhere}
pre{background:#f4f4f4;padding:.6em;overflow:auto;white-space:pre-wrap}
blockquote{border-left:4px solid #767676;margin:.5em 0;padding-left:1em;color:#1a1a1a}
#editor,#editor *{font-family:inherit}#editor pre,#editor pre *,#editor code{font-family:ui-monospace,Menlo,Consolas,monospace}
#editor [data-content-type=quote] blockquote{color:#1a1a1a}
.children{margin-left:1.5em}.editor{border:1px solid #ccc;border-radius:4px;padding:.5em 0;min-height:6em}.meta{color:#555;font-size:.9em}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
form.inline{display:inline}
button{font:inherit;padding:.35em .9em;border:1px solid #0b57d0;background:#0b57d0;color:#fff;border-radius:4px;cursor:pointer}
button.secondary{background:#fff;color:#0b57d0}button.danger{border-color:#a50e0e;background:#a50e0e}
fieldset{border:1px solid #ccc;margin:1em 0;padding:.5em 1em}
.field{margin:.6em 0}.field label{display:block;font-weight:600}
input[type=text],input[type=number]{font:inherit;padding:.3em;width:100%;max-width:32em;border:1px solid #767676;border-radius:3px}
.scopes{display:grid;grid-template-columns:repeat(auto-fill,minmax(12em,1fr));gap:.2em 1em}
.scopes label{font-weight:normal}
.notice{border:2px solid #137333;background:#e6f4ea;padding:.6em 1em;margin:1em 0}
.error{border:2px solid #a50e0e;background:#fce8e6;padding:.6em 1em;margin:1em 0}
.steps li{margin:.4em 0}.done{color:#137333}
.filters{display:flex;flex-wrap:wrap;gap:.5em 1em;align-items:end}
@media (max-width:40em){main{padding:.6em}th,td{padding:.25em}}
`;

/** The script: the copy button and live updates from the page's event stream. */
export const APP_JS = `(function(){
"use strict";
function $(s){return document.querySelector(s)}
document.addEventListener("click",function(e){
  var b=e.target.closest&&e.target.closest("button[data-copy]");if(!b)return;
  var input=document.getElementById(b.getAttribute("data-copy"));if(!input)return;
  input.select();
  var done=function(){b.textContent="Copied"};
  if(navigator.clipboard&&navigator.clipboard.writeText)navigator.clipboard.writeText(input.value).then(done,function(){document.execCommand("copy");done()});
  else{document.execCommand("copy");done()}
});
document.querySelectorAll("time[datetime]").forEach(function(t){var d=new Date(t.getAttribute("datetime"));if(!isNaN(d))t.textContent=d.toLocaleString(undefined,{dateStyle:"medium",timeStyle:"short"})});
var editor=document.getElementById("editor");
if(editor&&editor.getAttribute("data-bundle")){
  var css=document.createElement("link");css.rel="stylesheet";css.href=editor.getAttribute("data-style");document.head.appendChild(css);
  import(editor.getAttribute("data-bundle")).catch(function(){var s=$("#live-status");if(s){s.setAttribute("data-editor","failed");s.textContent="The editor could not load; the document below follows changes live."}});
}
var live=document.querySelector("[data-live]");if(!live||!window.EventSource)return;
var source=new EventSource(live.getAttribute("data-live"));
var status=$("#live-status");
source.onopen=function(){if(status)status.textContent=status.getAttribute("data-editor")==="failed"?"The editor could not load; the document below follows changes live.":"Following changes live."};
source.onerror=function(){if(status)status.textContent="Reconnecting…"};
source.addEventListener("version",function(e){
  var d=JSON.parse(e.data);
  var body=$("#doc-body");if(body)body.innerHTML=d.html;
  var set=function(id,v){var n=document.getElementById(id);if(n)n.textContent=v};
  set("doc-version",String(d.version));set("doc-revision",d.revision);set("doc-markdown",d.markdown);set("doc-loss",String(d.lossCount));
  if(status)status.textContent="Updated to version "+d.version+".";
});
source.addEventListener("job",function(e){
  var d=JSON.parse(e.data);var row=document.querySelector('[data-job="'+d.jobId+'"]');if(!row)return;
  var set=function(c,v){var n=row.querySelector("."+c);if(n)n.textContent=v};
  set("state",d.state);set("phase",d.phase);set("percent",d.percent+"%");
  var bar=row.querySelector("progress");if(bar)bar.value=d.percent;
});
})();
`;

/** Changes whenever the assets change, so `?v=` busts caches. */
export const ASSET_VERSION = (() => {
  let h = 2166136261;
  for (const c of APP_CSS + APP_JS) h = Math.imul(h ^ c.charCodeAt(0), 16777619);
  return (h >>> 0).toString(16);
})();

/**
 * `/favicon.ico`: a 16×16 icon (the page's link blue with a white page shape), built once as a
 * 32-bit BMP inside an ICO container, so browsers asking for it get an icon, not a 404.
 */
export const FAVICON_ICO: Uint8Array = (() => {
  const size = 16;
  const pixels = size * size * 4;
  const mask = size * 4; // 1 bit per pixel, rows padded to 32 bits
  const image = 40 + pixels + mask;
  const out = new Uint8Array(6 + 16 + image);
  const view = new DataView(out.buffer);
  view.setUint16(2, 1, true); // type: icon
  view.setUint16(4, 1, true); // one image
  out[6] = size;
  out[7] = size;
  view.setUint16(10, 1, true); // planes
  view.setUint16(12, 32, true); // bits per pixel
  view.setUint32(14, image, true);
  view.setUint32(18, 22, true); // offset of the image
  const bmp = 22;
  view.setUint32(bmp, 40, true);
  view.setInt32(bmp + 4, size, true);
  view.setInt32(bmp + 8, size * 2, true); // colour and mask
  view.setUint16(bmp + 12, 1, true);
  view.setUint16(bmp + 14, 32, true);
  view.setUint32(bmp + 20, pixels + mask, true);
  for (let row = 0; row < size; row++) {
    for (let col = 0; col < size; col++) {
      const y = size - 1 - row; // bottom-up
      const page = col >= 4 && col <= 11 && y >= 3 && y <= 12;
      const at = bmp + 40 + (row * size + col) * 4;
      out.set(page ? [0xff, 0xff, 0xff, 0xff] : [0xd0, 0x57, 0x0b, 0xff], at); // BGRA
    }
  }
  return out;
})();
