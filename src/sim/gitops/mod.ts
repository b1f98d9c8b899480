/**
 * Generated home-ops GitOps repositories for tests and the demo: a seeded state
 * (`state.ts`), its files (`render.ts`), Renovate-like bumps and the mistakes they can carry
 * (`bumps.ts`), the bundled versions of the simulated upstream artifacts (`upstream.ts`), and a
 * real git repository to hold them (`git_repo.ts`).
 */
export * from "./state.ts";
export * from "./render.ts";
export * from "./bumps.ts";
export * from "./upstream.ts";
export * from "./git_repo.ts";
