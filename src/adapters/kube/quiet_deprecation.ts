/**
 * @kubernetes/client-node 1.4 imports Node's deprecated `punycode` (through node-fetch 2's
 * whatwg-url); the warning it triggers is about a dependency, not something a cairn user can act
 * on, and it was printed on every command that talks to Kubernetes. Only that one deprecation is
 * silenced, and only when the library is about to load: installing it in main.ts made every
 * command, `cairn plan check` included, start Deno's Node compatibility layer (`node:process`,
 * about 30 ms of a cold start) whether or not it ever loaded the library.
 */
import process from "node:process";

let installed = false;

/** Drops the DEP0040 (`punycode`) warning from `process.emitWarning`; idempotent. */
export function silenceDependencyDeprecation(): void {
  if (installed) return;
  installed = true;
  const emit = process.emitWarning.bind(process) as (...a: unknown[]) => void;
  process.emitWarning = ((warning: unknown, ...rest: unknown[]) => {
    const code = typeof rest[0] === "object" && rest[0] !== null
      ? (rest[0] as { code?: unknown }).code
      : rest[1];
    if (code === "DEP0040" || String(warning).includes("`punycode` module is deprecated")) return;
    emit(warning, ...rest);
  }) as typeof process.emitWarning;
}
