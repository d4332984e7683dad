/**
 * Loaded into our reconciler by the bench (`node --require bench/alloc-probe.cjs`, with BENCH_ALLOC=1): counts the
 * bytes the process allocates on V8's heap and writes the running total to BENCH_ALLOC_FILE four
 * times a second. Node has no allocation counter of its own; this adds what the heap grew by to
 * what each collection freed, from V8's GC profiler, restarted every window so that its records
 * do not pile up (they are a few hundred bytes a collection, counted in the total too).
 *
 * It is not free: it raised the reconciler's peak RSS by about 14 MiB at N = 300 (105 against
 * 90-91 MiB), so the bench loads it only when asked, and a run that counts allocations is not
 * the one to read memory from. Loaded with --require: as an ES module (--import) it also cost
 * 15 MiB at start, for the module loader.
 */
'use strict';
const fs = require('node:fs');
const v8 = require('node:v8');

const file = process.env.BENCH_ALLOC_FILE;
if (file) {
  let total = 0;
  let heapAtStart = v8.getHeapStatistics().used_heap_size;
  let profiler = new v8.GCProfiler();
  profiler.start();
  setInterval(() => {
    const { statistics } = profiler.stop();
    const heapNow = v8.getHeapStatistics().used_heap_size;
    let freed = 0;
    for (const gc of statistics)
      freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
    total += heapNow - heapAtStart + freed;
    profiler = new v8.GCProfiler();
    profiler.start();
    // Between the two profilers no one records a collection: one there (this code allocates)
    // shows only as the heap dropping, and counting from before it took its bytes off the total
    // (a negative total at N = 3). Growth in that gap is allocation; a drop is a collection.
    heapAtStart = v8.getHeapStatistics().used_heap_size;
    total += Math.max(0, heapAtStart - heapNow);
    fs.writeFileSync(file, String(total));
  }, 250).unref();
}
