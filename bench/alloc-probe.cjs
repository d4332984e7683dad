/**
 * Loaded into our reconciler by the bench (`node --require bench/alloc-probe.cjs`, with BENCH_ALLOC=1): counts the
 * bytes the process allocates on V8's heap and writes the running total to BENCH_ALLOC_FILE four
 * times a second. Node has no allocation counter of its own; this sums the heap's growth between
 * the collections V8's GC profiler records (bench/alloc-count.cjs), the profiler restarted every
 * window so that its records do not pile up (they are a few hundred bytes a collection, counted in
 * the total too).
 *
 * It is not free: it raised the reconciler's peak RSS by about 14 MiB at N = 300 (105 against
 * 90-91 MiB), so the bench loads it only when asked, and a run that counts allocations is not
 * the one to read memory from. Loaded with --require: as an ES module (--import) it also cost
 * 15 MiB at start, for the module loader.
 */
'use strict';
const fs = require('node:fs');
const v8 = require('node:v8');
const { allocationCounter } = require('./alloc-count.cjs');

const file = process.env.BENCH_ALLOC_FILE;
if (file) {
  const usedHeap = () => v8.getHeapStatistics().used_heap_size;
  const counter = allocationCounter(usedHeap());
  let profiler = new v8.GCProfiler();
  profiler.start();
  setInterval(() => {
    const { statistics } = profiler.stop();
    for (const gc of statistics)
      counter.collection(gc.beforeGC.heapStatistics.usedHeapSize, gc.afterGC.heapStatistics.usedHeapSize);
    counter.reading(usedHeap());
    profiler = new v8.GCProfiler();
    profiler.start();
    // Between the two profilers no one records a collection; the counter takes a drop as one.
    counter.reading(usedHeap());
    fs.writeFileSync(file, String(counter.total()));
  }, 250).unref();
}
