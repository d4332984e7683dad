const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

/**
 * The longest file, started first: the tier runs two files at a time (jest.e2e.config.js), so the
 * rest run beside it on the other worker instead of after it.
 */
const FIRST = ['seed-samples.test.ts'];
/**
 * Files that change the node for every file after them: network-isolation stops kube-proxy. Last,
 * and each waits until every other file of the run has finished (test/e2e/run-coordination.ts).
 */
const LAST = ['network-isolation.test.ts'];

/**
 * The tier's files: FIRST, then the rest in the order of their paths, LAST at the end (jest's
 * default orders them by their last run's time). The run's files are named in OPKIT_E2E_FILES,
 * which the workers inherit, so a file that must run alone knows which to wait for.
 */
class E2eSequencer extends Sequencer {
  sort(tests) {
    const rank = (t) => {
      const name = path.basename(t.path);
      return FIRST.includes(name) ? 0 : LAST.includes(name) ? 2 : 1;
    };
    const ordered = [...tests].sort((a, b) => rank(a) - rank(b) || a.path.localeCompare(b.path));
    process.env.OPKIT_E2E_FILES = JSON.stringify(ordered.map((t) => t.path));
    return ordered;
  }
}

module.exports = E2eSequencer;
