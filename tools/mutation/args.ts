/** Command-line flags of ./tools/mutate. */
export interface MutateArgs {
  readonly only?: readonly string[];
  readonly list: boolean;
  readonly help: boolean;
  readonly jobs: number;
  readonly budgetSeconds?: number;
  /** The caller just ran every test file unmutated and green: no baseline runs here. */
  readonly baselinePassed: boolean;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** Accepts `--flag value` and `--flag=value`; anything unknown is a usage error, not ignored. */
export function parseArgs(argv: readonly string[]): Parsed<MutateArgs> {
  let only: string[] | undefined;
  let list = false;
  let help = false;
  let baselinePassed = false;
  let jobs = 1;
  let budgetSeconds: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const raw = argv[i]!;
    const eq = raw.indexOf("=");
    const flag = raw.startsWith("--") && eq > 0 ? raw.slice(0, eq) : raw;
    const inline = raw.startsWith("--") && eq > 0 ? raw.slice(eq + 1) : undefined;
    const value = (): string | undefined => inline ?? argv[++i];
    switch (flag) {
      case "--list":
        list = true;
        break;
      case "--baseline-passed":
        baselinePassed = true;
        break;
      case "--help":
      case "-h":
        help = true;
        break;
      case "--only": {
        const v = value();
        const names = (v ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "");
        if (names.length === 0) return { ok: false, error: "--only needs NAME[,NAME]" };
        only = [...(only ?? []), ...names];
        break;
      }
      case "--jobs": {
        const n = positiveInt(value());
        if (n === undefined) return { ok: false, error: "--jobs needs a positive integer" };
        jobs = n;
        break;
      }
      case "--budget-seconds": {
        const n = positiveInt(value());
        if (n === undefined) {
          return { ok: false, error: "--budget-seconds needs a positive integer" };
        }
        budgetSeconds = n;
        break;
      }
      default:
        return { ok: false, error: `unknown argument ${JSON.stringify(raw)}` };
    }
  }
  return {
    ok: true,
    value: {
      list,
      help,
      jobs,
      baselinePassed,
      ...(only === undefined ? {} : { only }),
      ...(budgetSeconds === undefined ? {} : { budgetSeconds }),
    },
  };
}

function positiveInt(s: string | undefined): number | undefined {
  if (s === undefined || !/^[1-9][0-9]*$/.test(s)) return undefined;
  return Number(s);
}
