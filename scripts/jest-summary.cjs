// One line CI can read from jest's JSON results: tests passed, failed and skipped, and suites that failed to run.
const path = require('node:path');

const results = require(path.resolve(process.argv[2]));
const brokenSuites = results.numRuntimeErrorTestSuites;
// A suite that fails to run (an error outside any test) counts no failed test, yet fails the run.
const broken = brokenSuites ? `, ${brokenSuites} suite${brokenSuites === 1 ? '' : 's'} failed to run` : '';
console.log(
  `${results.numPassedTests} passed, ${results.numFailedTests} failed, ${results.numPendingTests} skipped${broken}`,
);
