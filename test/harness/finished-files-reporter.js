const fs = require('node:fs');
const path = require('node:path');

/**
 * Records each file of the e2e tier as finished, in jest's main process as its results arrive —
 * passed, failed, or its tests all skipped, whichever worker ran it — so that a file which must run
 * alone waits on what has ended (test/e2e/run-coordination.ts reads it). One JSON string (the
 * file's path) per line of OPKIT_E2E_RUN_DIR/finished, a directory the tier's set-up makes and its
 * teardown removes.
 */
class FinishedFilesReporter {
  onTestFileResult(test) {
    const dir = process.env.OPKIT_E2E_RUN_DIR;
    if (dir) fs.appendFileSync(path.join(dir, 'finished'), `${JSON.stringify(test.path)}\n`);
  }
}

module.exports = FinishedFilesReporter;
