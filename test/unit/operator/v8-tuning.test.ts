/**
 * The V8 flags the reconciler sets on itself at start (see operator/run.ts): a measured memory
 * lever (bench/RESULTS.md), left alone where its operator set it already.
 */
import { HEAP_GROWING_PERCENT, v8TuningFlags } from '../../../operator/run';

test('by default the old generation grows by 20 % past what is live', () => {
  expect(v8TuningFlags([])).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
  expect(HEAP_GROWING_PERCENT).toBe(20);
});

test('a growth factor on the command line or in NODE_OPTIONS wins, in either spelling', () => {
  expect(v8TuningFlags(['--heap-growing-percent=50'])).toEqual([]);
  expect(v8TuningFlags([], '--max-semi-space-size=2 --heap_growing_percent=50')).toEqual([]);
  // Other flags leave it to the reconciler.
  expect(v8TuningFlags(['--max-old-space-size=256'], '--max-semi-space-size=2')).toEqual([
    `--heap-growing-percent=${HEAP_GROWING_PERCENT}`,
  ]);
});
