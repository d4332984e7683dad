const Sequencer = require('@jest/test-sequencer').default;

/** Test files in the order of their paths (jest's default orders them by their last run's time). */
class ByNameSequencer extends Sequencer {
  sort(tests) {
    return [...tests].sort((a, b) => a.path.localeCompare(b.path));
  }
}

module.exports = ByNameSequencer;
