/**
 * Tells the global teardown (same process, runs after this) whether any test failed, so the
 * control plane's logs are kept exactly when they are needed.
 */
class FailureFlagReporter {
  onRunComplete(_contexts, results) {
    if (results.numFailedTests > 0 || results.numRuntimeErrorTestSuites > 0) process.env.OPKIT_TESTS_FAILED = '1';
  }
}
module.exports = FailureFlagReporter;
