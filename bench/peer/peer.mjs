/**
 * Peer baseline for `npm run bench -- peer`: the same one-block edits as the engine's, done the way
 * a BlockNote-based server keeps a document in Yjs — the editor's ProseMirror schema (a headless
 * `BlockNoteEditor` of @blocknote/core) and y-prosemirror's `updateYFragment`, which diffs the new
 * ProseMirror document against the Y.XmlFragment and writes the difference in one transaction.
 * Plain JavaScript with its own package.json (installed on demand: `npm install --prefix bench/peer`),
 * so that the project neither depends on nor type-checks these packages.
 */
import { BlockNoteEditor, blockToNode } from '@blocknote/core';
import { prosemirrorToYXmlFragment, updateYFragment } from 'y-prosemirror';
import * as Y from 'yjs';

/**
 * A document of `size` paragraphs in a Y.XmlFragment and a function that edits one block (as the
 * engine bench does: `Edited n …` text) and returns the Yjs update of that edit.
 * @param {number} size
 * @param {(size: number, n: number) => string} textOf block text of block n
 * @param {(size: number, n: number) => string} editTextOf new text of edit n
 */
export function peerDocument(size, textOf, editTextOf) {
  const editor = BlockNoteEditor.create();
  const { pmSchema } = editor;
  const styles = editor.schema.styleSchema;
  const node = (id, text) => blockToNode({ id, type: 'paragraph', content: [{ type: 'text', text, styles: {} }] }, pmSchema, styles);
  const nodes = Array.from({ length: size }, (_, i) => node(`b${i}`, textOf(size, i)));
  const docOf = () => pmSchema.topNodeType.create(null, pmSchema.nodes.blockGroup.create(null, nodes));
  const ydoc = new Y.Doc();
  const fragment = ydoc.getXmlFragment('document-store');
  prosemirrorToYXmlFragment(docOf(), fragment);
  const meta = { mapping: new Map(), isOMark: new Map() };
  updateYFragment(ydoc, fragment, docOf(), meta); // builds the node ↔ Y type mapping once
  let last = null;
  ydoc.on('update', (u) => {
    last = u;
  });
  let seq = 0;
  return () => {
    seq++;
    const at = seq % size;
    nodes[at] = node(`b${at}`, editTextOf(size, seq));
    ydoc.transact(() => updateYFragment(ydoc, fragment, docOf(), meta));
    return last;
  };
}
