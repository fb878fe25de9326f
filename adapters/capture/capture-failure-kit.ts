/**
 * Test helper of the capture adapters: the {@link CaptureFailure} a promise rejects with.
 * @module
 */
import { isCaptureFailure } from '../../src/library/capture-port.ts';

/** The code and message of the CaptureFailure `p` rejects with; throws when it resolves or rejects otherwise. */
export async function captureFailure(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (e) {
    if (isCaptureFailure(e)) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error('expected a CaptureFailure');
}
