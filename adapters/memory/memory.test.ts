import { storageConformance } from '../conformance/index.ts';
import { memoryStorage } from './index.ts';

storageConformance('memory', async () => {
  const storage = memoryStorage();
  return { storage, teardown: () => storage.close() };
});
