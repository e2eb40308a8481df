// Three tiers. Unit tests sit beside the code they test and need no service; integration tests sit there too and
// talk to the real PostgreSQL, NATS or Redis their name says (`*.db.spec.ts`, `*.nats.spec.ts`,
// `*.redis.spec.ts`); e2e tests talk to a real cluster started once.
// Tests are transpiled file by file (isolatedModules); `npm run lint` is what type-checks them.
const moduleNameMapper = { '^@ds/(.*)$': '<rootDir>/libs/$1/src/index.ts' };
const INTEGRATION = '\\.(db|nats|redis)\\.spec\\.ts$';
const transform = { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.spec.json' }] };

module.exports = {
  testTimeout: 60000,
  projects: [
    {
      displayName: 'unit',
      rootDir: __dirname,
      testEnvironment: 'node',
      testMatch: ['<rootDir>/libs/**/*.spec.ts', '<rootDir>/apps/**/*.spec.ts', '<rootDir>/test/chaos/**/*.spec.ts', '<rootDir>/test/lint/**/*.spec.ts'],
      testPathIgnorePatterns: ['/node_modules/', INTEGRATION],
      moduleNameMapper,
      transform,
    },
    {
      displayName: 'integration',
      rootDir: __dirname,
      testEnvironment: 'node',
      testMatch: ['<rootDir>/{libs,apps}/**/*.{db,nats,redis}.spec.ts'],
      moduleNameMapper,
      transform,
    },
    {
      displayName: 'e2e',
      rootDir: __dirname,
      testEnvironment: 'node',
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/e2e/global-setup.ts',
      globalTeardown: '<rootDir>/test/e2e/global-teardown.ts',
      moduleNameMapper,
      transform,
    },
  ],
};
