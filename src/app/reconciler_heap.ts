/**
 * V8 heap settings of the reconciler process (`DENO_V8_FLAGS`, set by deploy/Containerfile and
 * by the `cairn` launcher for `cairn reconcile`). A relist of a large cluster's Pods allocates
 * pages of JSON, whole objects and their cut copies at a high rate; with V8's defaults the young
 * generation grows to its largest size and the old generation reserves twice what it holds, and
 * neither is given back. Smaller semi-spaces and a lower growing factor keep the reserve close to
 * what the caches hold: reconciler RSS with a 1,000-node / 30,000-pod / 3,000-PDB cache 310 →
 * 230 MB (bench/reconciler_memory_bench.ts), for ~5 % more CPU in bench/health_bench.ts.
 * test/deploy/reconciler_heap_test.ts holds the launcher, the image and the benchmark to this.
 */
export const RECONCILER_V8_FLAGS = "--max-semi-space-size=8,--heap-growing-percent=20";

/**
 * V8 heap settings of every other command, set by the launcher: the young generation at its full
 * size from the start. A cold `plan check` of a 500-node plan allocates its parse and schema
 * results quickly and V8 otherwise starts the young generation small and scavenges it again and
 * again while it grows: check + verify 279–289 → 249–252 ms median wall in one session's
 * interleaved pairs of bench/plan_check_bench.ts (issue 18). The code cache Deno keeps for the
 * modules is keyed by these flags too, so they are the same for every run of a command.
 */
export const COMMAND_V8_FLAGS = "--min-semi-space-size=16";
