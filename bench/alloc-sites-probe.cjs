/**
 * Loaded into our reconciler for a look at where it allocates (not how much it keeps):
 *
 *   OPKIT_BUNDLE_MINIFY=0 BENCH_ALLOC_SITES=/tmp/sites.heapprofile \
 *     BENCH_NODE_ARGS="--require $PWD/bench/alloc-sites-probe.cjs" N=1000 BENCH_SKIP_REFERENCE=1 npm run bench:converge
 *   node --import tsx bench/alloc-sites.ts /tmp/sites.heapprofile
 *
 * V8's sampling heap profiler, asked to keep the samples of objects collected since (Node's own
 * --heap-prof drops them, so it shows what stays alive, where garbage is what costs the CPU). The
 * profile is written when the process exits: the bench stops the reconciler with SIGTERM, and it
 * shuts down and exits.
 */
'use strict';
const fs = require('node:fs');
const inspector = require('node:inspector');

const file = process.env.BENCH_ALLOC_SITES;
if (file) {
  const session = new inspector.Session();
  session.connect();
  session.post('HeapProfiler.startSampling', {
    // One sample per 32 KiB allocated on average: cheap, and thousands of samples over a run.
    samplingInterval: 32 * 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  process.on('exit', () => {
    // The in-process session answers synchronously, so this runs to its end before the exit.
    session.post('HeapProfiler.stopSampling', (err, result) => {
      if (!err) fs.writeFileSync(file, JSON.stringify(result.profile));
    });
  });
}
