/**
 * CPU and allocation profiles of this process over a window, through node:inspector: what
 * bench/stages.ts attributes to stages (and what the server children of bench/http.ts take on
 * request, over IPC).
 * @module
 */
import { Session } from 'node:inspector/promises';

/** The parts of a V8 CPU profile read here. */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** The parts of a V8 sampling heap profile read here (allocations sampled about every `samplingInterval` bytes). */
export interface AllocationProfile {
  head: AllocationNode;
  samples: { size: number; nodeId: number }[];
}
export interface AllocationNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: AllocationNode[];
}

/** The CPU sampling interval (µs): finer costs the profiled process more (its samples are scaled to the unprofiled run's CPU). */
export const SAMPLE_US = 200;

let session: Session | null = null;
let running: 'cpu' | 'alloc' | null = null;

/**
 * Start sampling this process's main thread: its CPU (`cpu`, every {@link SAMPLE_US} µs) or its allocations
 * (`alloc`: about one sample per 1 KB allocated, objects collected by later GCs included).
 */
export async function startProfile(kind: 'cpu' | 'alloc' = 'cpu'): Promise<void> {
  session ??= new Session();
  session.connect();
  running = kind;
  if (kind === 'cpu') {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: SAMPLE_US });
    await session.post('Profiler.start');
  } else {
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as never);
  }
}

/** Stop sampling; the profile since {@link startProfile}. */
export async function stopProfile(): Promise<CpuProfile | AllocationProfile> {
  const s = session!;
  let profile: CpuProfile | AllocationProfile;
  if (running === 'cpu') {
    profile = ((await s.post('Profiler.stop')) as unknown as { profile: CpuProfile }).profile;
    await s.post('Profiler.disable');
  } else {
    profile = ((await s.post('HeapProfiler.stopSampling')) as unknown as { profile: AllocationProfile }).profile;
    await s.post('HeapProfiler.disable');
  }
  running = null;
  s.disconnect();
  return profile;
}
