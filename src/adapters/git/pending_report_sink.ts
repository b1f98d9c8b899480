/**
 * `PendingReportSink`: reports that could not be pushed (remote down, refused, timed out) are
 * kept on disk and pushed when the remote answers again, so a final execution report written
 * while the remote is away — or just before a SIGTERM — is not lost.
 *
 * One file, `pending.json` in the given directory, holds the newest document per report path
 * and the messages of the publishes it stands for. Every publish first folds the pending
 * documents in (the new ones win on the same path) and pushes them all in one commit; only when
 * that commit lands is the file removed. So a pending document is never pushed after a newer one
 * for the same path, and the file stays bounded by the number of report paths. The file is
 * replaced atomically (write, then rename), so a crash leaves the old or the new queue, never half.
 */
import { CairnError } from "../../domain/errors.ts";
import type { PublishResult, ReportDocument, ReportSink } from "../../ports/report_sink.ts";

interface PendingFile {
  readonly version: 1;
  readonly messages: readonly string[];
  readonly documents: readonly ReportDocument[];
}

const FILE = "pending.json";
/** Commit messages remembered for the replay commit (documents are bounded by report paths). */
const MAX_MESSAGES = 20;

/** Wraps a sink with an on-disk queue of reports that did not reach the remote. */
export class PendingReportSink implements ReportSink {
  readonly #inner: ReportSink;
  readonly #dir: string;

  /** `dir`: private state directory (beside the journal), created when first needed. */
  constructor(inner: ReportSink, dir: string) {
    this.#inner = inner;
    this.#dir = dir;
  }

  /** Documents waiting for the remote (for status and tests). */
  async pending(): Promise<readonly ReportDocument[]> {
    return (await this.#read())?.documents ?? [];
  }

  async publish(documents: readonly ReportDocument[], message: string): Promise<PublishResult> {
    const queued = await this.#read();
    // A report cairn itself refuses (an unsafe name) would fail on every retry: never queue it,
    // and never let it hold the queue's valid reports back.
    if (queued) {
      try {
        return await this.#push(queued, documents, message);
      } catch (e) {
        if (!isRefusedDocument(e)) {
          await this.#write(merge(queued, documents, message));
          throw e;
        }
        // Some new document is refused: push the queue alone, then surface the refusal.
        await this.retryPending().catch(() => undefined);
        throw e;
      }
    }
    try {
      return await this.#inner.publish(documents, message);
    } catch (e) {
      if (!isRefusedDocument(e)) await this.#write(merge(undefined, documents, message));
      throw e;
    }
  }

  /** Pushes what is queued, if anything; undefined when nothing was. Throws if it still fails. */
  async retryPending(): Promise<PublishResult | undefined> {
    const queued = await this.#read();
    if (!queued) return undefined;
    return await this.#push(queued, [], "");
  }

  async #push(
    queued: PendingFile,
    documents: readonly ReportDocument[],
    message: string,
  ): Promise<PublishResult> {
    const all = merge(queued, documents, message);
    const kept = queued.messages.length;
    const text = message
      ? `${message} (with ${kept} report update(s) kept while the remote was unreachable)`
      : `reports kept while the remote was unreachable: ${queued.messages.join("; ")}`;
    const r = await this.#inner.publish(all.documents, text);
    await Deno.remove(this.#path).catch((e) => {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    });
    return r;
  }

  get #path(): string {
    return `${this.#dir}/${FILE}`;
  }

  async #read(): Promise<PendingFile | undefined> {
    let text: string;
    try {
      text = await Deno.readTextFile(this.#path);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return undefined;
      throw e;
    }
    const parsed = parseQueue(text);
    if (parsed) return parsed;
    // An unreadable queue must not block every later report: it is set aside (kept for a
    // human), and the reports flow again; what it held is lost, which is logged by the caller.
    await Deno.rename(this.#path, `${this.#path}.unreadable`);
    throw new CairnError({
      reason: "Internal",
      message: `the pending-report queue was unreadable and was set aside as ${FILE}.unreadable; ` +
        "the reports it held were not pushed",
    });
  }

  async #write(p: PendingFile): Promise<void> {
    await Deno.mkdir(this.#dir, { recursive: true });
    const tmp = `${this.#path}.tmp`;
    await Deno.writeTextFile(tmp, JSON.stringify(p));
    await Deno.rename(tmp, this.#path);
  }
}

function parseQueue(text: string): PendingFile | undefined {
  try {
    const p = JSON.parse(text) as PendingFile;
    return p?.version === 1 && Array.isArray(p.documents) && Array.isArray(p.messages)
      ? p
      : undefined;
  } catch {
    return undefined;
  }
}

/** The queue plus newer documents: one per report path, the newest winning. */
function merge(
  queued: PendingFile | undefined,
  documents: readonly ReportDocument[],
  message: string,
): PendingFile {
  const byPath = new Map<string, ReportDocument>();
  for (const d of [...(queued?.documents ?? []), ...documents]) byPath.set(documentKey(d), d);
  return {
    version: 1,
    // The newest messages only: a long outage must not grow the queue without bound.
    messages: [...(queued?.messages ?? []), ...(message ? [message] : [])].slice(-MAX_MESSAGES),
    documents: [...byPath.values()],
  };
}

function documentKey(d: ReportDocument): string {
  return d.kind === "preview"
    ? JSON.stringify([d.plan, "preview", d.branch])
    : JSON.stringify([d.plan, "execution"]);
}

function isRefusedDocument(e: unknown): boolean {
  return (e as { reason?: unknown })?.reason === "PlanPathInvalid";
}
