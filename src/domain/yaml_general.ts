/**
 * The general YAML parser (the `yaml` package), loaded on first use instead of at start-up.
 * Plans, catalogues and health policies are plain YAML that yaml_fast.ts reads in one pass; the
 * general parser is needed only for what it does not read and to locate a problem in a file.
 * Loading it costs a cold `cairn plan check` about 100 ms here (its CommonJS build of some 70
 * files, and Deno's Node compatibility layer with it), so the modules that parse YAML on that
 * path ask for it here, synchronously, when they need it: `require` loads the very module a
 * static `import "yaml"` loads (same files from node_modules, same instance), so the parser and
 * its messages are unchanged.
 */
import type * as Yaml from "yaml";
import type { Document, LineCounter } from "yaml";

let lib: typeof Yaml | undefined;

/** The `yaml` package, loaded the first time it is asked for. */
export function generalYaml(): typeof Yaml {
  if (lib) return lib;
  // The global `process` (Deno's Node layer) gives a synchronous require for this module: code
  // loading, no I/O of the domain's (the named exception of test/architecture_test.ts).
  const { process } = globalThis as unknown as {
    process: {
      getBuiltinModule(id: "node:module"): { createRequire(from: string): (id: string) => unknown };
    };
  };
  lib = process.getBuiltinModule("node:module").createRequire(import.meta.url)(
    "yaml",
  ) as typeof Yaml;
  return lib;
}

/** True once {@link generalYaml} has loaded the package (benchmarks report it). */
export function generalYamlLoaded(): boolean {
  return lib !== undefined;
}

/** A document parsed with its line counter, for locating a problem in the text. */
export interface LocatedDocument {
  readonly doc: Document.Parsed;
  readonly lc: LineCounter;
}

/**
 * `text`'s document with its line counter, parsed by the general parser the first time it is
 * asked for (a reader that took the fast path parses it only to locate a problem). Duplicate keys
 * are errors; `prettyErrors` as the reader's messages expect.
 */
export function lazyDocument(
  text: string,
  o: { readonly prettyErrors: boolean },
): () => LocatedDocument {
  let parsed: LocatedDocument | undefined;
  return () => {
    if (parsed) return parsed;
    const { LineCounter, parseDocument } = generalYaml();
    const lc = new LineCounter();
    const doc = parseDocument(text, {
      lineCounter: lc,
      uniqueKeys: true,
      prettyErrors: o.prettyErrors,
    });
    return parsed = { doc, lc };
  };
}
