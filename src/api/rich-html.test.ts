/**
 * Server-rendered documents (the document page before the editor loads, the review's report): a run of
 * numbered items is one `<ol>`, so the browser numbers them 1, 2, 3 (issue 29 item 5); bullets alike.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { richJsonHtml } from './rich-html.ts';

const item = (id: string, type: string, text: string, children: unknown[] = []) => ({ id, type, props: {}, content: [{ type: 'text', text, styles: {} }], children });

test('consecutive numbered items are one <ol>; a paragraph between starts another list; bullets are one <ul>; nesting stays inside its item', () => {
  const html = richJsonHtml(
    JSON.stringify({
      type: 'blocks',
      blocks: [
        item('a', 'numberedListItem', 'one'),
        item('b', 'numberedListItem', 'two', [item('b1', 'bulletListItem', 'inner 1'), item('b2', 'bulletListItem', 'inner 2')]),
        item('c', 'numberedListItem', 'three'),
        item('p', 'paragraph', 'between'),
        item('d', 'bulletListItem', 'x'),
        item('e', 'bulletListItem', 'y'),
        item('f', 'numberedListItem', 'again'),
      ],
    }),
  );
  assert.is(html.match(/<ol>/g)?.length, 2);
  assert.match(html, /^<ol><li id="b-a">one<\/li><li id="b-b">two<div class="children"><ul><li id="b-b1">inner 1<\/li><li id="b-b2">inner 2<\/li><\/ul><\/div><\/li><li id="b-c">three<\/li><\/ol>/);
  assert.match(html, /<ul><li id="b-d">x<\/li><li id="b-e">y<\/li><\/ul>\n<ol><li id="b-f">again<\/li><\/ol>$/);
});

test.run();
