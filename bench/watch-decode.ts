/**
 * Benchmark: what one Pod watch event costs the reconciler to read into its cache, in CPU and in
 * bytes allocated, read as JSON (the stream split into lines, `JSON.parse`, then the cache
 * transform) against read as protobuf (the stream split into frames, the Pod decoded straight
 * into what the cache keeps). Both read the same events, recorded from the API server in both
 * encodings (test/fixtures/pod-protobuf: running, crash-looping, unpullable, unschedulable and
 * terminating pods), fed in 16 KiB chunks as a socket delivers them. Runs as the reconciler
 * does: bundled by esbuild (as the image's bundle is; module boundaries cost nothing there, where
 * a transpile-on-load would add a getter call to every imported name) and on the image's Node.
 *
 *   npm run bench:watch-decode        (PASSES: how many times the recorded stream is read, default 3000)
 *
 * Allocated bytes are counted with V8's GC profiler: what the heap grew by, plus what each
 * collection in between freed.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import { bundleReconciler } from '../command/image/bundle';
import { NODE_RUNTIME } from '../command/image/definition';
import { BuiltinTypes, type KubeObject } from '../constructs/contract';
import { cacheDecoder, cacheTransform } from '../operator/runtime/cache';
import { decodeWatchEvent, FrameReader } from '../operator/runtime/client/protobuf';
import { nodeBinary } from './node-runtimes';

const FIXTURES = process.env.BENCH_FIXTURES ?? path.resolve(__dirname, '..', 'test', 'fixtures', 'pod-protobuf');
const PASSES = Number(process.env.PASSES ?? 3000);
const CHUNK = 16 * 1024;

interface Cost {
  readonly events: number;
  readonly cpuMicrosPerEvent: number;
  readonly allocatedBytesPerEvent: number;
  /** What the stream carries per event, for scale. */
  readonly wireBytesPerEvent: number;
}

function chunks(buf: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < buf.length; at += CHUNK) out.push(buf.subarray(at, at + CHUNK));
  return out;
}

/** CPU and allocation of `passes` reads of the stream, after a warm-up. */
function measure(stream: Buffer[], readStream: (chunks: Buffer[]) => number, wireBytes: number): Cost {
  for (let i = 0; i < Math.min(200, PASSES); i++) readStream(stream);
  const profiler = new v8.GCProfiler();
  profiler.start();
  const heapAtStart = v8.getHeapStatistics().used_heap_size;
  const cpu = process.cpuUsage();
  let events = 0;
  for (let i = 0; i < PASSES; i++) events += readStream(stream);
  const used = process.cpuUsage(cpu);
  const heapAtEnd = v8.getHeapStatistics().used_heap_size;
  const gcs = profiler.stop().statistics;
  const freed = gcs.reduce(
    (sum, gc) => sum + gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize,
    0,
  );
  return {
    events,
    cpuMicrosPerEvent: +((used.user + used.system) / events).toFixed(2),
    allocatedBytesPerEvent: Math.round((heapAtEnd - heapAtStart + freed) / events),
    wireBytesPerEvent: Math.round((wireBytes * PASSES) / events),
  };
}

/** The JSON path: lines as the client splits them, parsed, transformed. */
function readJson(stream: Buffer[]): number {
  const transform = cacheTransform('cdk8s-operator-kit', BuiltinTypes.Pod);
  let buffered = '';
  let events = 0;
  for (const chunk of stream) {
    buffered += chunk.toString('utf8');
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl).trim();
      buffered = buffered.slice(nl + 1);
      if (!line) continue;
      const e = JSON.parse(line) as { object: KubeObject };
      keep(transform(e.object));
      events++;
    }
  }
  return events;
}

/** The protobuf path: frames, each Pod decoded into what the cache keeps. */
function readProtobuf(stream: Buffer[]): number {
  const decoder = cacheDecoder(BuiltinTypes.Pod);
  if (!decoder) throw new Error('no Pod decoder');
  let events = 0;
  const frames = new FrameReader((frame) => {
    keep(decodeWatchEvent(frame, decoder).object);
    events++;
  });
  for (const chunk of stream) frames.push(chunk);
  return events;
}

/** Holds the last result, so that the work is not optimized away. */
let kept: unknown;
function keep(obj: unknown): void {
  kept = obj;
}

/** Bundles this file and runs the bundle on the image's Node. */
async function runBundled(): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-watch-decode-'));
  try {
    const bundle = path.join(dir, 'watch-decode.js');
    await bundleReconciler({ entry: __filename, outfile: bundle, minify: false });
    const r = spawnSync(nodeBinary(NODE_RUNTIME), [bundle], {
      stdio: 'inherit',
      env: { ...process.env, BENCH_CHILD: '1', BENCH_FIXTURES: FIXTURES },
    });
    return r.status ?? 1;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function main(): void {
  const json = fs.readFileSync(path.join(FIXTURES, 'pod-watch.ndjson'));
  const protobuf = fs.readFileSync(path.join(FIXTURES, 'pod-watch.pb'));
  const viaJson = measure(chunks(json), readJson, json.length);
  const viaProtobuf = measure(chunks(protobuf), readProtobuf, protobuf.length);
  if (!kept) throw new Error('nothing was read');
  console.log(
    JSON.stringify(
      {
        node: process.version,
        passes: PASSES,
        json: viaJson,
        protobuf: viaProtobuf,
        protobufVsJson: {
          cpu: +(viaProtobuf.cpuMicrosPerEvent / viaJson.cpuMicrosPerEvent).toFixed(2),
          allocatedBytes: +(viaProtobuf.allocatedBytesPerEvent / viaJson.allocatedBytesPerEvent).toFixed(2),
          wireBytes: +(viaProtobuf.wireBytesPerEvent / viaJson.wireBytesPerEvent).toFixed(2),
        },
      },
      null,
      2,
    ),
  );
}

if (process.env.BENCH_CHILD === '1') main();
else
  void runBundled().then((code) => {
    process.exitCode = code;
  });
