const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

/** Files that change the node for every file after them: network-isolation stops kube-proxy. */
const LAST = ['network-isolation.test.ts'];

/** Test files in the order of their paths, those in LAST at the end (jest's default orders them by their last run's time). */
class ByNameSequencer extends Sequencer {
  sort(tests) {
    const last = (t) => (LAST.includes(path.basename(t.path)) ? 1 : 0);
    return [...tests].sort((a, b) => last(a) - last(b) || a.path.localeCompare(b.path));
  }
}

module.exports = ByNameSequencer;
