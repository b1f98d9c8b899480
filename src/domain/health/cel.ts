import { celEnv, type CelResult, CelScalar, isCelError, parse, plan } from "@bufbuild/cel";

/**
 * The variables tuppr binds in `healthChecks` expressions: the whole object and its status. Like
 * tuppr's environment, only the standard library (no string extensions).
 */
const ENV = celEnv({
  variables: { object: CelScalar.DYN, status: CelScalar.DYN },
});

/** A parsed, planned CEL expression, reusable across objects and rounds. */
export interface CelProgram {
  readonly expr: string;
  readonly run: (bindings: Record<string, unknown>) => CelResult;
}

/** Compiles `expr`; throws a SyntaxError with the parser's message when it does not parse. */
export function compileCel(expr: string, variables: readonly string[] = []): CelProgram {
  let parsed;
  try {
    parsed = parse(expr);
  } catch (e) {
    throw new SyntaxError(e instanceof Error ? e.message : String(e));
  }
  const env = variables.length === 0 ? ENV : celEnv({
    variables: Object.fromEntries(
      ["object", "status", ...variables].map((v) => [v, CelScalar.DYN]),
    ),
  });
  const fn = plan(env, parsed) as unknown as (ctx: Record<string, never>) => CelResult;
  return { expr, run: (b) => fn(b as Record<string, never>) };
}

/** Outcome of one evaluation: a value, or an error message (never a thrown exception). */
export type CelOutcome =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: string };

/** Evaluates a program; CEL errors and evaluator exceptions both come back as `ok: false`. */
export function evalCel(program: CelProgram, bindings: Record<string, unknown>): CelOutcome {
  try {
    const v = program.run(bindings);
    if (isCelError(v)) return { ok: false, error: v.message };
    return { ok: true, value: v };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

/** Caches compiled programs by expression text (policies repeat expressions across rounds). */
const CACHE = new Map<string, CelProgram>();

export function cachedCel(expr: string): CelProgram {
  let p = CACHE.get(expr);
  if (!p) {
    p = compileCel(expr);
    CACHE.set(expr, p);
  }
  return p;
}
