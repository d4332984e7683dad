/**
 * The arithmetic of bench/alloc-probe.cjs, apart from V8 so that a test can feed it collections.
 *
 * What the process allocated is the heap's growth between collections: from the level a
 * collection left (or the last reading) to the level the next one found. Summed only where the
 * heap grew, the count cannot fall, whatever the profiler misses: a collection it does not record
 * (Node 24 does not report every one, and none is recorded between two profilers) shows as the heap
 * dropping between two readings, and is taken as the new level rather than off the total. An
 * earlier probe added the heap's net change to what the recorded collections freed; one unrecorded
 * collection made that total negative (−12 MiB in a CI run on Node 24).
 */
'use strict';

/**
 * A counter of the bytes allocated, read from the heap's level at each reading and each recorded
 * collection in the order they happened.
 */
function allocationCounter(levelAtStart) {
  let level = levelAtStart;
  let total = 0;
  /** The heap rose (or fell) to `used` since the last reading: only a rise is allocation. */
  function reading(used) {
    total += Math.max(0, used - level);
    level = used;
  }
  return {
    reading,
    /** A collection the profiler recorded: the heap grew to `before` since the last level, then fell to `after`. */
    collection(before, after) {
      reading(before);
      level = after;
    },
    total: () => total,
  };
}

module.exports = { allocationCounter };
