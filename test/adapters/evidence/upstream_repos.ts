/**
 * The evidence tests' upstream repositories: the builder lives in src/sim/evidence_fixture.ts
 * (the demo and the reconcile world use it too); these names keep the tests' imports short.
 */
export {
  buildUpstreamRepos,
  EVIDENCE_FIXTURES as FIXTURES,
  fixtureGit as git,
  LOGICAL_UPSTREAMS as LOGICAL,
  type UpstreamRepos,
} from "../../../src/sim/evidence_fixture.ts";
