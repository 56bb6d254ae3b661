// Mutation testing of the domain rules against their unit tests (`npm run test:mutation`): a surviving mutant is a rule no test pins down.
import jestConfig from './jest.config.js';

const unitProject = jestConfig.projects.find((project) => project.displayName === 'unit');

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  testRunner: 'jest',
  mutate: ['src/domain/**/*.ts'],
  jest: {
    projectType: 'custom',
    // One flat configuration: Stryker's test environment and coverage hooks apply at the top level, not inside projects.
    config: {
      ...unitProject,
      projects: [],
      displayName: undefined,
      testMatch: ['<rootDir>/test/unit/domain/**/*.test.ts'],
    },
  },
  coverageAnalysis: 'perTest',
  // The sandbox holds only the domain, its unit tests and their shared fixtures: copying stays quick.
  ignorePatterns: [
    '/*',
    '!/package.json',
    '!/src',
    '/src/*',
    '!/src/domain',
    '!/test',
    '/test/*',
    '!/test/unit',
    '/test/unit/*',
    '!/test/unit/domain',
    '!/test/support',
  ],
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  cleanTempDir: 'always',
};
