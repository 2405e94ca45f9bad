// Jest environment for suites that load hcn.node. Jest hands every test file a copy of process.env, but the
// simulator client inside the addon reads HCN_SIM with getenv(); this environment gives the tests the real one.
// It is the default environment of every suite (jest.config.js).
const { TestEnvironment } = require('jest-environment-node');

class NativeEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.global.process.env = process.env;
  }
}

module.exports = NativeEnvironment;
