/**
 * The V8 flags the reconciler sets on itself at start (see operator/run.ts): each a measured
 * memory lever (bench/RESULTS.md), and each left alone where its operator set it already.
 */
import { HEAP_GROWING_PERCENT, MAX_OPTIMIZATION_TIER, v8TuningFlags } from '../../../operator/run';

test('by default: the old generation grows by 20 % and hot code stops at Maglev', () => {
  expect(v8TuningFlags([])).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`, '--max-opt=2']);
  expect(MAX_OPTIMIZATION_TIER).toBe(2);
});

test('a growth factor on the command line or in NODE_OPTIONS wins, in either spelling', () => {
  expect(v8TuningFlags(['--heap-growing-percent=50'])).toEqual(['--max-opt=2']);
  expect(v8TuningFlags([], '--max-semi-space-size=2 --heap_growing_percent=50')).toEqual(['--max-opt=2']);
});

test('a tier on the command line wins: TurboFan is back with --max-opt=999', () => {
  expect(v8TuningFlags(['--max-opt=999'])).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
  expect(v8TuningFlags(['--max_opt=4'])).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
  // Another flag that merely starts the same is not it.
  expect(v8TuningFlags(['--max-optimizations=1'])).toContain('--max-opt=2');
});
